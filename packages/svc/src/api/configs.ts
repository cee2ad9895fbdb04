// Configs (spec "Configs"). Scopes configs:read / configs:write. Bodies answered by POST and PUT are the full
// record as GET /configs/{id} shows it. POST needs an existing namespace (404), as secrets and volumes do.
// DELETE does not check referrers: a deployment whose mounted config is gone moves to `config_error`.
import type { FastifyInstance } from 'fastify';
import { assertNamespaceAccess, type ApiDeps } from './context.js';
import { parseBody } from './body.js';
import { conflict, notFound, validationFailed } from './problem.js';
import { assertWellFormedText, idParamsSchema, listedNamespaces, type IdParams } from './resource-common.js';
import { validateConfigCreate, validateConfigReplace } from '../domain/config.js';
import { createConfig, deleteConfig, getConfig, listConfigs, replaceConfig, type ConfigRecord } from '../store/configs.js';

const listEntry = (config: ConfigRecord) => ({ id: config.id, name: config.name, namespace: config.namespace, data: config.data });
const fullRecord = (config: ConfigRecord) => ({ ...listEntry(config), labels: config.labels });

export function registerConfigRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.get('/configs', { config: { auth: { scope: 'configs:read' } } }, async (request) =>
    listConfigs(deps.db, listedNamespaces(request)).map(listEntry),
  );

  app.post('/configs', { config: { auth: { scope: 'configs:write' } } }, async (request, reply) => {
    const body = parseBody(request.body, {
      name: { type: 'string', required: true },
      namespace: { type: 'string', required: true },
      data: { type: 'string', required: true },
      labels: { type: 'string' },
    });
    assertWellFormedText(body);
    assertNamespaceAccess(request, body.namespace);
    const input = { namespace: body.namespace, name: body.name, data: body.data, labels: body.labels ?? '' };
    const violations = validateConfigCreate(input);
    if (violations.length > 0) throw validationFailed(violations);
    const outcome = createConfig(deps.db, input, deps.now());
    if (outcome.kind === 'namespace_missing') throw notFound('namespace', body.namespace);
    if (outcome.kind === 'duplicate') throw conflict('config', `${body.namespace}/${body.name}`);
    return reply.code(201).send(fullRecord(outcome.record));
  });

  app.get<IdParams>('/configs/:id', { config: { auth: { scope: 'configs:read' } }, schema: { params: idParamsSchema } }, async (request) => {
    const config = getConfig(deps.db, request.params.id);
    if (!config) throw notFound('config', request.params.id);
    assertNamespaceAccess(request, config.namespace);
    return fullRecord(config);
  });

  app.put<IdParams>('/configs/:id', { config: { auth: { scope: 'configs:write' } }, schema: { params: idParamsSchema } }, async (request) => {
    const body = parseBody(request.body, {
      name: { type: 'string', required: true },
      data: { type: 'string', required: true },
      labels: { type: 'string', required: true },
    });
    assertWellFormedText(body);
    const current = getConfig(deps.db, request.params.id);
    if (!current) throw notFound('config', request.params.id);
    assertNamespaceAccess(request, current.namespace);
    const violations = validateConfigReplace(body);
    if (violations.length > 0) throw validationFailed(violations);
    const outcome = replaceConfig(deps.db, current.id, body, deps.now());
    if (outcome.kind === 'not_found') throw notFound('config', request.params.id);
    if (outcome.kind === 'duplicate') throw conflict('config', `${current.namespace}/${body.name}`);
    return fullRecord(outcome.record);
  });

  app.delete<IdParams>(
    '/configs/:id',
    { config: { auth: { scope: 'configs:write' } }, schema: { params: idParamsSchema } },
    async (request, reply) => {
      const config = getConfig(deps.db, request.params.id);
      if (!config) throw notFound('config', request.params.id);
      assertNamespaceAccess(request, config.namespace);
      deleteConfig(deps.db, config.id);
      return reply.code(204).send();
    },
  );
}
