// Secrets (spec "Secrets"). Scopes secrets:read / secrets:write. The value is sealed on the way in and never
// returned or logged: responses are built from metadata only, and problems never quote the body.
import type { FastifyInstance } from 'fastify';
import { assertNamespaceAccess, type ApiDeps } from './context.js';
import { parseBody } from './body.js';
import { conflict, notFound, validationFailed } from './problem.js';
import { assertWellFormedText, deleteReferencedResource, idParamsSchema, listedNamespaces, type IdParams } from './resource-common.js';
import { validateSecretInput } from '../domain/secret.js';
import { createSecret, deleteSecret, getSecret, listSecrets } from '../store/secrets.js';

export function registerSecretRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.post('/secrets', { config: { auth: { scope: 'secrets:write' } } }, async (request, reply) => {
    const body = parseBody(request.body, {
      namespace: { type: 'string', required: true },
      name: { type: 'string', required: true },
      value: { type: 'string', required: true },
    });
    assertWellFormedText(body);
    assertNamespaceAccess(request, body.namespace);
    const violations = validateSecretInput(body);
    if (violations.length > 0) throw validationFailed(violations);
    const outcome = createSecret(deps.db, deps.secretBox, body, deps.now());
    if (outcome.kind === 'namespace_missing') throw notFound('namespace', body.namespace);
    if (outcome.kind === 'duplicate') throw conflict('secret', `${body.namespace}/${body.name}`);
    const { id, created_at, namespace, name } = outcome.record;
    return reply.code(201).send({ id, created_at, namespace, name });
  });

  app.get('/secrets', { config: { auth: { scope: 'secrets:read' } } }, async (request) => listSecrets(deps.db, listedNamespaces(request)));

  app.get<IdParams>('/secrets/:id', { config: { auth: { scope: 'secrets:read' } }, schema: { params: idParamsSchema } }, async (request) => {
    const secret = getSecret(deps.db, request.params.id);
    if (!secret) throw notFound('secret', request.params.id);
    assertNamespaceAccess(request, secret.namespace);
    return secret;
  });

  app.delete<IdParams>(
    '/secrets/:id',
    { config: { auth: { scope: 'secrets:write' } }, schema: { params: idParamsSchema } },
    async (request, reply) =>
      deleteReferencedResource(request, reply, 'secret', (id) => getSecret(deps.db, id), (id, force) => deleteSecret(deps.db, id, force)),
  );
}
