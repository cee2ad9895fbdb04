// The webhook outbox (spec "Events"). enqueueEvent writes the event and one pending delivery per matching,
// non-revoked webhook in the CALLER's transaction, so an event exists exactly when the status change that
// produced it was committed, and survives any crash after that. Delivery (retries, dead letters) reads
// `event_deliveries` by the partial index on pending rows.
import { randomUUID } from 'node:crypto';
import { filtersMatch, type EventKind } from '../domain/webhook-filter.js';
import type { Db } from './db.js';
import { prepared } from './prepared.js';
import { parseFilters } from './webhooks.js';

/**
 * One event: `kind` is the event kind (header `X-Svc-Event`), `payload` the exact JSON body: the spec's
 * envelope (`schema_version` 1, `deployment_id`, `namespace`, `name`, `kind` = the deployment's kind) plus the
 * kind's own fields. domain/events.ts builds these (webhookEvent); any value of that shape is accepted.
 */
export interface OutboxEvent {
  kind: EventKind;
  payload: {
    schema_version: 1;
    deployment_id: string;
    namespace: string;
    name: string;
    kind: string;
  };
}

export interface EnqueuedEvent {
  eventId: string;
  /** Ids of the webhooks that got a pending delivery. */
  webhookIds: string[];
}

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Synchronous; call it inside the transaction that changes the deployment. (Called outside one it still
 * commits the event and its deliveries atomically.) A delivery is first due at `now`.
 */
export function enqueueEvent(db: Db, event: OutboxEvent, now: Date = new Date()): EnqueuedEvent {
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
