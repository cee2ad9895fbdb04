// Deliveries of a webhook: list them by status (dead letters by default) and put dead letters back in the
// queue (docs/svc/webhooks.md, "Dead letters"). Same access rule as the webhook routes: payloads come from every
// namespace, so a namespace-restricted token gets 403.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf, type ApiDeps } from './context.js';
import { badRequest, forbidden, notFound, ApiProblem } from './problem.js';
import { idParamsSchema, type IdParams } from './resource-common.js';
import { getWebhook, type WebhookRecord } from '../store/webhooks.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../store/outbox.js';
import { getDelivery, listDeliveries, redeliver, redeliverAllDead, type DeliveryRecord } from '../webhooks/queue.js';
import { deliveryId } from '../webhooks/signer.js';

export const DELIVERIES_LIMIT_DEFAULT = 100;
export const DELIVERIES_LIMIT_MAX = 1000;

const idSchema = idParamsSchema.properties.id;
const deliveryParams = { type: 'object', properties: { id: idSchema, event_id: idSchema }, required: ['id', 'event_id'] } as const;

type DeliveryParams = { Params: { id: string; event_id: string } };

function assertUnrestricted(request: FastifyRequest): void {
  if (principalOf(request).namespaces.length > 0) {
    throw forbidden('webhook deliveries carry events of every namespace: a namespace-restricted token cannot read or redeliver them');
  }
}

function loadWebhook(deps: ApiDeps, id: string): WebhookRecord {
  const webhook = getWebhook(deps.db, id);
  if (!webhook) throw notFound('webhook', id);
  return webhook;
}

/** A webhook that may still receive deliveries: redelivery to a revoked one is a 409. */
function loadActiveWebhook(deps: ApiDeps, id: string): WebhookRecord {
  const webhook = loadWebhook(deps, id);
  if (webhook.revoked_at !== null) throw new ApiProblem(409, `webhook '${webhook.id}' is revoked: it gets no more deliveries`);
  return webhook;
}

function single(query: unknown, name: string): string | undefined {
  const raw = typeof query === 'object' && query !== null ? (query as Record<string, unknown>)[name] : undefined;
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string') throw badRequest(`query parameter '${name}' may be given once`);
  return raw;
}

function parseStatus(query: unknown): DeliveryStatus {
  const raw = single(query, 'status');
  if (raw === undefined) return 'dead';
  const status = DELIVERY_STATUSES.find((s) => s === raw);
  if (!status) throw badRequest(`query parameter 'status' must be one of ${DELIVERY_STATUSES.join(', ')}`);
  return status;
}

function parseLimit(query: unknown): number {
  const raw = single(query, 'limit');
  if (raw === undefined) return DELIVERIES_LIMIT_DEFAULT;
  if (!/^[0-9]{1,7}$/.test(raw) || Number(raw) < 1 || Number(raw) > DELIVERIES_LIMIT_MAX) {
    throw badRequest(`query parameter 'limit' must be an integer from 1 to ${DELIVERIES_LIMIT_MAX}`);
  }
  return Number(raw);
}

/** The API shape of a delivery. `next_attempt_at` only means something while pending. */
export function deliveryView(record: DeliveryRecord) {
  let payload: unknown;
  try {
    payload = JSON.parse(record.payload);
  } catch {
    payload = record.payload;
  }
  return {
    id: deliveryId(record.eventId, record.webhookId),
    event_id: record.eventId,
    webhook_id: record.webhookId,
    event: record.kind,
    status: record.status,
    attempts: record.attempts,
    last_error: record.lastError,
    created_at: record.createdAt,
    next_attempt_at: record.status === 'pending' ? record.nextAttemptAt : null,
    delivered_at: record.deliveredAt,
    payload,
  };
}

export function registerWebhookDeliveryRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get<IdParams>(
    '/webhooks/:id/deliveries',
    { config: { auth: { scope: 'webhooks:read' } }, schema: { params: idParamsSchema } },
    async (request) => {
      assertUnrestricted(request);
      const status = parseStatus(request.query);
      const limit = parseLimit(request.query);
      const webhook = loadWebhook(deps, request.params.id);
      return listDeliveries(deps.db, webhook.id, status, limit).map(deliveryView);
    },
  );

  app.post<DeliveryParams>(
    '/webhooks/:id/deliveries/:event_id/redeliver',
    { config: { auth: { scope: 'webhooks:write' } }, schema: { params: deliveryParams } },
    async (request, reply) => {
      assertUnrestricted(request);
      const webhook = loadActiveWebhook(deps, request.params.id);
      const existing = getDelivery(deps.db, webhook.id, request.params.event_id);
      if (!existing) throw notFound('delivery', request.params.event_id);
      if (!redeliver(deps.db, webhook.id, existing.eventId, deps.now())) {
        throw new ApiProblem(409, `delivery of event '${existing.eventId}' is already pending`);
      }
      const queued = getDelivery(deps.db, webhook.id, existing.eventId);
      return reply.code(202).send(queued ? deliveryView(queued) : null);
    },
  );

  app.post<IdParams>(
    '/webhooks/:id/deliveries/redeliver',
    { config: { auth: { scope: 'webhooks:write' } }, schema: { params: idParamsSchema } },
    async (request, reply) => {
      assertUnrestricted(request);
      const webhook = loadActiveWebhook(deps, request.params.id);
      return reply.code(202).send({ redelivered: redeliverAllDead(deps.db, webhook.id, deps.now()) });
    },
  );
}
