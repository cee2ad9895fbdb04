// Webhooks (spec "Webhooks"): CRUD only; delivery reads the outbox (store/outbox.ts). Scopes webhooks:read /
// webhooks:write. A webhook receives events of every namespace, so a namespace-restricted token may not
// manage webhooks at all (403): otherwise it could subscribe to other namespaces' events.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { principalOf, type ApiDeps } from './context.js';
import { parseBody } from './body.js';
import { badRequest, forbidden, notFound, validationFailed } from './problem.js';
import { RESOURCE_BODY_LIMIT_BYTES, assertWellFormedText, idParamsSchema, type IdParams } from './resource-common.js';
import { WEBHOOK_EVENTS_MAX, WEBHOOK_SECRET_MAX_LENGTH, validateWebhookInput } from '../domain/webhook.js';
import { createWebhook, getWebhook, listWebhooks, revokeWebhook } from '../store/webhooks.js';

function assertUnrestricted(request: FastifyRequest): void {
  if (principalOf(request).namespaces.length > 0) {
    throw forbidden('webhooks receive events of every namespace: a namespace-restricted token cannot manage them');
  }
}

export function registerWebhookRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.post('/webhooks', { config: { auth: { scope: 'webhooks:write' } }, bodyLimit: RESOURCE_BODY_LIMIT_BYTES }, async (request, reply) => {
    assertUnrestricted(request);
    const body = parseBody(request.body, {
      url: { type: 'string', required: true },
      events: { type: 'strings', nullable: true },
      secret: { type: 'string' },
    });
    assertWellFormedText(body);
    const events = body.events ?? [];
    if (events.length > WEBHOOK_EVENTS_MAX) throw badRequest(`field 'events' accepts at most ${WEBHOOK_EVENTS_MAX} filters`);
    if (body.secret !== undefined && (body.secret.length < 1 || body.secret.length > WEBHOOK_SECRET_MAX_LENGTH)) {
      throw badRequest(`field 'secret' must be 1-${WEBHOOK_SECRET_MAX_LENGTH} characters; omit it to have one generated`);
    }
    const violations = validateWebhookInput({ url: body.url, events });
    if (violations.length > 0) throw validationFailed(violations);
    const { record, secret } = createWebhook(
      deps.db,
      deps.secretBox,
      { url: body.url, events, ...(body.secret === undefined ? {} : { secret: body.secret }) },
      deps.now(),
    );
    return reply.code(201).send({ id: record.id, url: record.url, events: record.events, secret, created_at: record.created_at });
  });

  app.get('/webhooks', { config: { auth: { scope: 'webhooks:read' } } }, async (request) => {
    assertUnrestricted(request);
    return listWebhooks(deps.db);
  });

  app.delete<IdParams>(
    '/webhooks/:id',
    { config: { auth: { scope: 'webhooks:write' } }, schema: { params: idParamsSchema } },
    async (request, reply) => {
      assertUnrestricted(request);
      if (!getWebhook(deps.db, request.params.id)) throw notFound('webhook', request.params.id);
      revokeWebhook(deps.db, request.params.id, deps.now());
      return reply.code(204).send();
    },
  );
}
