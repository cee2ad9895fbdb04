// Webhook delivery as the server starts it: the worker over the server's database, signing with the secrets
// sealed by the server's SecretBox.
import type { Db } from '../store/db.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { onDeliveriesEnqueued } from '../store/outbox.js';
import { webhookSigningSecret } from '../store/webhooks.js';
import { startDeliveryWorker, type DeliveryWorker, type WorkerLog } from './worker.js';
import type { DeliverySettings } from './settings.js';

export { deliverySettingsFromEnv, type DeliverySettings } from './settings.js';
export type { DeliveryWorker } from './worker.js';

/** Starts the worker, woken by every enqueue into this database (scheduler and API alike) instead of the next poll. */
export function startWebhookDelivery(deps: { db: Db; secretBox: SecretBox }, settings: DeliverySettings, log: WorkerLog): DeliveryWorker {
  const worker = startDeliveryWorker({
    db: deps.db,
    settings,
    log,
    signingSecret: (webhookId) => webhookSigningSecret(deps.db, deps.secretBox, webhookId),
  });
  const stopListening = onDeliveriesEnqueued(deps.db, worker.wake);
  return {
    id: worker.id,
    wake: worker.wake,
    async stop() {
      stopListening();
      await worker.stop();
    },
  };
}
