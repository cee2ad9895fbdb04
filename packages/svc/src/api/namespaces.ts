// Namespaces (spec "Namespaces"). Scopes namespaces:read / namespaces:write. A namespace-restricted token sees
// and creates only its own namespaces. There is no DELETE: the spec has none, and removing a namespace that
// still holds secrets, volumes or configs would orphan them (the store refuses it by foreign key anyway).
import type { FastifyInstance } from 'fastify';
import { assertNamespaceAccess, visibleNamespaces, type ApiDeps } from './context.js';
import { parseBody } from './body.js';
import { cachedJson } from './read-cache.js';
import { conflict, notFound, validationFailed } from './problem.js';
import { RESOURCE_BODY_LIMIT_BYTES, idParamsSchema, type IdParams } from './resource-common.js';
import { validateNamespaceInput } from '../domain/namespace.js';
import { createNamespace, getNamespace, listNamespaces } from '../store/namespaces.js';

export function registerNamespaceRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/namespaces', { config: { auth: { scope: 'namespaces:read' } } }, async (request, reply) => {
    const visible = visibleNamespaces(request);
    const body = cachedJson(deps.db, `namespaces:${JSON.stringify(visible)}`, () => listNamespaces(deps.db, visible));
    return reply.type('application/json; charset=utf-8').send(body);
  });

  app.get<IdParams>('/namespaces/:id', { config: { auth: { scope: 'namespaces:read' } }, schema: { params: idParamsSchema } }, async (request) => {
    const namespace = getNamespace(deps.db, request.params.id);
    if (!namespace) throw notFound('namespace', request.params.id);
    assertNamespaceAccess(request, namespace.name);
    return namespace;
  });

  app.post(
    '/namespaces',
    { config: { auth: { scope: 'namespaces:write' } }, bodyLimit: RESOURCE_BODY_LIMIT_BYTES },
    async (request, reply) => {
      const body = parseBody(request.body, { name: { type: 'string', required: true } });
      const violations = validateNamespaceInput(body);
      if (violations.length > 0) throw validationFailed(violations);
      assertNamespaceAccess(request, body.name);
      const created = createNamespace(deps.db, body.name, deps.now());
      if (!created) throw conflict('namespace', body.name);
      return reply.code(201).send(created);
    },
  );
}
