// webhooks table. The signing secret is sealed with the SecretBox (associated data `webhook:<id>`): delivery
// needs it in clear to compute the HMAC, so it cannot be hashed, and it must not sit in the file in clear.
import { randomBytes, randomUUID } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Db } from './db.js';
import { prepared } from './prepared.js';

export interface WebhookRecord {
  id: string;
  url: string;
  /** Filters as given (duplicates removed); empty = every kind. */
  events: string[];
  created_at: string;
  revoked_at: string | null;
}

export interface NewWebhook {
  url: string;
  events: readonly string[];
  /** Absent = generate one. */
  secret?: string;
}

interface WebhookRow {
  id: string;
  url: string;
  events: string;
  created_at: string;
  revoked_at: string | null;
}

const COLUMNS = 'id, url, events, created_at, revoked_at';

/** 32 random bytes, base64url, with a prefix that makes a leaked value recognisable. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function parseFilters(text: string): string[] {
  const parsed: unknown = JSON.parse(text);
  return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
}

function toRecord(row: WebhookRow): WebhookRecord {
  return { ...row, events: parseFilters(row.events) };
}

function sealAssociatedData(id: string): string {
  return `webhook:${id}`;
}

/** Validate first (domain/webhook.ts). Returns the record and the clear secret, which is never readable again via the API. */
export function createWebhook(db: Db, box: SecretBox, input: NewWebhook, now: Date): { record: WebhookRecord; secret: string } {
  const secret = input.secret ?? generateWebhookSecret();
  const record: WebhookRecord = {
    id: randomUUID(),
    url: input.url,
    events: [...new Set(input.events)],
    created_at: now.toISOString(),
    revoked_at: null,
  };
  const sealed = box.seal(Buffer.from(secret, 'utf8'), sealAssociatedData(record.id));
  prepared(db, 'INSERT INTO webhooks (id, url, events, sealed_secret, created_at) VALUES (?, ?, ?, ?, ?)').run(
    record.id,
    record.url,
    JSON.stringify(record.events),
    sealed,
    record.created_at,
  );
  return { record, secret };
}

/** Every webhook, revoked ones included (they show `revoked_at`), oldest first. */
export function listWebhooks(db: Db): WebhookRecord[] {
  return prepared<[], WebhookRow>(db, `SELECT ${COLUMNS} FROM webhooks ORDER BY created_at, id`).all().map(toRecord);
}

export function getWebhook(db: Db, id: string): WebhookRecord | null {
  const row = prepared<[string], WebhookRow>(db, `SELECT ${COLUMNS} FROM webhooks WHERE id = ?`).get(id);
  return row ? toRecord(row) : null;
}

/**
 * Soft delete: sets `revoked_at` once (a second revoke keeps the first time). False when the id is unknown.
 * The enqueue path skips revoked webhooks; the delivery worker must also skip pending deliveries of a
 * webhook revoked after they were enqueued.
 */
export function revokeWebhook(db: Db, id: string, now: Date): boolean {
  const result = prepared(db, 'UPDATE webhooks SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?').run(now.toISOString(), id);
  return result.changes > 0;
}

/** The clear signing secret for delivery, or null when the webhook is unknown. */
export function webhookSigningSecret(db: Db, box: SecretBox, id: string): string | null {
  const row = prepared<[string], { sealed_secret: Buffer }>(db, 'SELECT sealed_secret FROM webhooks WHERE id = ?').get(id);
  return row ? box.open(row.sealed_secret, sealAssociatedData(id)).toString('utf8') : null;
}
