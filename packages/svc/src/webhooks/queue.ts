// The delivery queue over the outbox tables (store/migrations/002 and 004): batched claims with leases,
// batched settlement, lease reclaim after a restart, retention pruning, and the dead-letter reads and
// redelivery behind the API. Every query is served by the (status, next_attempt_at) index or a primary key.
import type { Db } from '../store/db.js';
import { prepared, jsonList } from '../store/prepared.js';
import type { DeliveryStatus } from '../store/outbox.js';
import type { Settlement } from './policy.js';

export interface ClaimedDelivery {
  eventId: string;
  webhookId: string;
  /** `X-Svc-Event`; checked against the vocabulary before sending (worker.ts). */
  kind: string;
  /** The exact JSON body to send. */
  payload: string;
  url: string;
  /** Attempts made, the one just claimed included. */
  attempts: number;
}

export interface Claim {
  claimed: ClaimedDelivery[];
  /** Due deliveries were left because their webhook reached its bound: claim again for the other webhooks. */
  capped: boolean;
}

interface ClaimRow {
  event_id: string;
  webhook_id: string;
  kind: string;
  payload: string;
  url: string;
  attempts: number;
}

/**
 * Claims up to `limit` due deliveries (oldest due first) for worker `self`, skipping revoked webhooks and
 * taking at most `perWebhook - inFlight` for each webhook (`inFlight`: attempts running now, by webhook).
 * Each claim counts an attempt and leases the delivery until `leaseUntil`. One write transaction.
 */
export function claimDue(
  db: Db,
  self: string,
  now: Date,
  leaseUntil: Date,
  limit: number,
  inFlight: ReadonlyMap<string, number>,
  perWebhook: number,
): Claim {
  const saturated = [...inFlight].filter(([, count]) => count >= perWebhook).map(([webhookId]) => webhookId);
  const select = prepared<[string, string, number], ClaimRow>(
    db,
    `SELECT d.event_id, d.webhook_id, e.kind, e.payload, w.url, d.attempts
       FROM event_deliveries d
       JOIN events e ON e.id = d.event_id
       JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND w.revoked_at IS NULL
        AND d.webhook_id NOT IN (SELECT value FROM json_each(?))
      ORDER BY d.next_attempt_at
      LIMIT ?`,
  );
  const lease = prepared(
    db,
    `UPDATE event_deliveries SET attempts = attempts + 1, next_attempt_at = ?, leased_by = ?
      WHERE event_id = ? AND webhook_id = ? AND status = 'pending'`,
  );
  return db
    .transaction((): Claim => {
      const rows = select.all(now.toISOString(), jsonList(saturated), limit);
      const until = leaseUntil.toISOString();
      const taken = new Map(inFlight);
      const claimed: ClaimedDelivery[] = [];
      let capped = false;
      for (const row of rows) {
        const count = taken.get(row.webhook_id) ?? 0;
        if (count >= perWebhook) {
          capped = true;
          continue;
        }
        taken.set(row.webhook_id, count + 1);
        lease.run(until, self, row.event_id, row.webhook_id);
        claimed.push({ eventId: row.event_id, webhookId: row.webhook_id, kind: row.kind, payload: row.payload, url: row.url, attempts: row.attempts + 1 });
      }
      return { claimed, capped };
    })
    .immediate();
}

export interface SettledDelivery {
  eventId: string;
  webhookId: string;
  settlement: Settlement;
}

/**
 * Records attempt results in one transaction. Only a delivery still leased by `self` is touched: one that was
 * revoked (row deleted) or redelivered meanwhile is left as it now is.
 */
export function settleDeliveries(db: Db, self: string, results: readonly SettledDelivery[]): void {
  if (results.length === 0) return;
  const delivered = prepared(
    db,
    `UPDATE event_deliveries SET status = 'delivered', delivered_at = ?, next_attempt_at = ?, last_error = NULL, leased_by = NULL
      WHERE event_id = ? AND webhook_id = ? AND status = 'pending' AND leased_by = ?`,
  );
  const retry = prepared(
    db,
    `UPDATE event_deliveries SET next_attempt_at = ?, last_error = coalesce(?, last_error), leased_by = NULL,
            attempts = attempts - ?
      WHERE event_id = ? AND webhook_id = ? AND status = 'pending' AND leased_by = ?`,
  );
  const dead = prepared(
    db,
    `UPDATE event_deliveries SET status = 'dead', next_attempt_at = ?, last_error = ?, leased_by = NULL
      WHERE event_id = ? AND webhook_id = ? AND status = 'pending' AND leased_by = ?`,
  );
  // One statement per result, each a primary-key update: a set-based form (json_each of pairs) makes SQLite scan
  // the status index instead.
  db.transaction(() => {
    for (const { eventId, webhookId, settlement } of results) {
      if (settlement.status === 'delivered') delivered.run(settlement.at, settlement.at, eventId, webhookId, self);
      else if (settlement.status === 'dead') dead.run(settlement.at, settlement.lastError, eventId, webhookId, self);
      else retry.run(settlement.nextAttemptAt, settlement.lastError, settlement.countsAsAttempt ? 0 : 1, eventId, webhookId, self);
    }
  })();
}

/**
 * After a restart: every delivery leased by another worker instance (a process that is gone; one server owns
 * its database) is due now. Returns how many were reclaimed.
 */
export function reclaimForeignLeases(db: Db, self: string, now: Date): number {
  return prepared(
    db,
    `UPDATE event_deliveries SET next_attempt_at = ?, leased_by = NULL
      WHERE status = 'pending' AND leased_by IS NOT NULL AND leased_by <> ?`,
  ).run(now.toISOString(), self).changes;
}

/** When the next pending delivery falls due (lease expiries included), or null when the queue is empty. */
export function nextDueAt(db: Db): string | null {
  const row = prepared<[], { at: string | null }>(db, "SELECT min(next_attempt_at) AS at FROM event_deliveries WHERE status = 'pending'").get();
  return row?.at ?? null;
}

/**
 * Deletes deliveries delivered before `cutoff`, then events older than `cutoff` that no delivery refers to
 * any more (delivered and pruned, or never matched a webhook). At most `batch` rows of each per call, so the
 * write lock is held briefly; returns how many rows went.
 */
export function pruneDelivered(db: Db, cutoff: Date, batch: number): { deliveries: number; events: number } {
  const at = cutoff.toISOString();
  const deliveries = prepared(
    db,
    `DELETE FROM event_deliveries WHERE (event_id, webhook_id) IN (
       SELECT event_id, webhook_id FROM event_deliveries WHERE status = 'delivered' AND next_attempt_at < ? LIMIT ?)`,
  ).run(at, batch).changes;
  const events = prepared(
    db,
    `DELETE FROM events WHERE id IN (
       SELECT e.id FROM events e WHERE e.created_at < ?
          AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = e.id) LIMIT ?)`,
  ).run(at, batch).changes;
  return { deliveries, events };
}

// ---------------------------------------------------------------------------------------------------------------
// Reads and redelivery for the API
// ---------------------------------------------------------------------------------------------------------------

export interface DeliveryRecord {
  eventId: string;
  webhookId: string;
  kind: string;
  status: DeliveryStatus;
  attempts: number;
  lastError: string | null;
  createdAt: string;
  nextAttemptAt: string;
  deliveredAt: string | null;
  payload: string;
}

interface DeliveryRow {
  event_id: string;
  webhook_id: string;
  kind: string;
  status: DeliveryStatus;
  attempts: number;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string;
  delivered_at: string | null;
  payload: string;
}

const DELIVERY_COLUMNS = `d.event_id, d.webhook_id, e.kind, d.status, d.attempts, d.last_error, e.created_at, d.next_attempt_at,
  d.delivered_at, e.payload`;

function toRecord(row: DeliveryRow): DeliveryRecord {
  return {
    eventId: row.event_id,
    webhookId: row.webhook_id,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    lastError: row.last_error,
    createdAt: row.created_at,
    nextAttemptAt: row.next_attempt_at,
    deliveredAt: row.delivered_at,
    payload: row.payload,
  };
}

/** A webhook's deliveries with `status`, most recent activity first, at most `limit`. */
export function listDeliveries(db: Db, webhookId: string, status: DeliveryStatus, limit: number): DeliveryRecord[] {
  return prepared<[string, string, number], DeliveryRow>(
    db,
    `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.webhook_id = ? AND d.status = ? ORDER BY d.next_attempt_at DESC, d.event_id LIMIT ?`,
  )
    .all(webhookId, status, limit)
    .map(toRecord);
}

export function getDelivery(db: Db, webhookId: string, eventId: string): DeliveryRecord | null {
  const row = prepared<[string, string], DeliveryRow>(
    db,
    `SELECT ${DELIVERY_COLUMNS} FROM event_deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = ? AND d.event_id = ?`,
  ).get(webhookId, eventId);
  return row ? toRecord(row) : null;
}

/**
 * Puts a dead or delivered delivery back in the queue as new: due now, attempt count 0, error cleared.
 * False when it is not in one of those states (pending, or gone).
 */
export function redeliver(db: Db, webhookId: string, eventId: string, now: Date): boolean {
  return (
    prepared(
      db,
      `UPDATE event_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL, delivered_at = NULL, leased_by = NULL
        WHERE webhook_id = ? AND event_id = ? AND status IN ('dead', 'delivered')`,
    ).run(now.toISOString(), webhookId, eventId).changes > 0
  );
}

/** Every dead letter of a webhook back in the queue; returns how many. */
export function redeliverAllDead(db: Db, webhookId: string, now: Date): number {
  return prepared(
    db,
    `UPDATE event_deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, last_error = NULL, leased_by = NULL
      WHERE webhook_id = ? AND status = 'dead'`,
  ).run(now.toISOString(), webhookId).changes;
}
