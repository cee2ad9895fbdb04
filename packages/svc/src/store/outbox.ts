// The webhook outbox (spec "Events"). enqueueEvent writes the event and one pending delivery per matching,
// non-revoked webhook in the CALLER's transaction, so an event exists exactly when the status change that
// produced it was committed, and survives any crash after that. Delivery (retries, dead letters) reads
// `event_deliveries` through the (status, next_attempt_at) index.
import { randomUUID } from 'node:crypto';
import type { WebhookEvent } from '../domain/events.js';
import { filtersMatch } from '../domain/webhook-filter.js';
import type { Db } from './db.js';
import { prepared } from './prepared.js';
import { parseFilters } from './webhooks.js';

export interface EnqueuedEvent {
  eventId: string;
  /** Ids of the webhooks that got a pending delivery. */
  webhookIds: string[];
}

/**
 * Who to tell that deliveries were enqueued (the delivery worker's wake(), so a new event goes out at once instead
 * of at the next poll). Keyed by database file, so every connection to it reaches the worker. Called inside the
 * enqueuing transaction; the worker only schedules a pump (setImmediate), which runs after the synchronous
 * transaction has committed, and a wake after a rolled-back one merely finds nothing due.
 */
const enqueueListeners = new Map<string, Set<() => void>>();

/** Registers `listener` for deliveries enqueued in the database file of `db`; returns the unregister function. */
export function onDeliveriesEnqueued(db: Db, listener: () => void): () => void {
  let listeners = enqueueListeners.get(db.name);
  if (listeners === undefined) {
    listeners = new Set();
    enqueueListeners.set(db.name, listeners);
  }
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && enqueueListeners.get(db.name) === listeners) enqueueListeners.delete(db.name);
  };
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Enqueues one event: `kind` goes to `X-Svc-Event`, `payload` (the spec's envelope plus the kind's fields,
 * built by domain/events.ts `webhookEvent`) is stored as the exact JSON body to send.
 * Synchronous; call it inside the transaction that changes the deployment. (Called outside one it still
 * commits the event and its deliveries atomically.) A delivery is first due at `now`.
 */
export function enqueueEvent(db: Db, event: WebhookEvent, now: Date = new Date()): EnqueuedEvent {
  return db.transaction((): EnqueuedEvent => {
    const eventId = randomUUID();
    const at = now.toISOString();
    prepared(db, 'INSERT INTO events (id, kind, deployment_id, payload, created_at) VALUES (?, ?, ?, ?, ?)').run(
      eventId,
      event.kind,
      event.payload.deployment_id,
      JSON.stringify(event.payload),
      at,
    );
    const webhooks = prepared<[], { id: string; events: string }>(db, 'SELECT id, events FROM webhooks WHERE revoked_at IS NULL').all();
    const insertDelivery = prepared(
      db,
      "INSERT INTO event_deliveries (event_id, webhook_id, status, attempts, next_attempt_at) VALUES (?, ?, 'pending', 0, ?)",
    );
    const webhookIds: string[] = [];
    for (const webhook of webhooks) {
      if (!filtersMatch(parseFilters(webhook.events), event.kind)) continue;
      insertDelivery.run(eventId, webhook.id, at);
      webhookIds.push(webhook.id);
    }
    if (webhookIds.length > 0) for (const listener of enqueueListeners.get(db.name) ?? []) listener();
    return { eventId, webhookIds };
  })();
}

/** Delivery counts per status, every status present (for `svc_events_by_status`). */
export function countDeliveriesByStatus(db: Db): Record<DeliveryStatus, number> {
  const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, dead: 0 };
  const rows = prepared<[], { status: DeliveryStatus; n: number }>(db, 'SELECT status, count(*) AS n FROM event_deliveries GROUP BY status').all();
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}
