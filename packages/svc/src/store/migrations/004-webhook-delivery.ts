// Webhook delivery (owned by the webhooks area), on top of the outbox of 002_resources:
// - `leased_by`: the worker instance that claimed a pending delivery. While leased, `next_attempt_at` holds the
//   lease expiry, so an expired lease is simply due again; a restarted server also reclaims at once every lease
//   held by another (dead) instance. NULL when not claimed.
// - Revoking a webhook drops its pending deliveries in the same statement (a trigger), so a revoked webhook gets
//   nothing more and its deliveries leave the queue depth at once; dead letters are kept for inspection.
import type { Migration } from './types.js';

export const WEBHOOK_DELIVERY_MIGRATIONS: readonly Migration[] = [
  {
    id: '004_webhook_delivery',
    up: `
      ALTER TABLE event_deliveries ADD COLUMN leased_by TEXT;
      CREATE TRIGGER webhook_revoked_drops_pending_deliveries
        AFTER UPDATE OF revoked_at ON webhooks
        WHEN NEW.revoked_at IS NOT NULL AND OLD.revoked_at IS NULL
      BEGIN
        DELETE FROM event_deliveries WHERE webhook_id = NEW.id AND status = 'pending';
      END;
    `,
  },
];
