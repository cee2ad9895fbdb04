// Volumes (spec "Volumes"). Scopes volumes:read / volumes:write. POST never creates the namespace; a
// deployment that mounts a named volume registers it through the store (registerVolume) instead.
import type { FastifyInstance } from 'fastify';
import { assertNamespaceAccess, type ApiDeps } from './context.js';
import { parseBody } from './body.js';
import { ApiProblem, conflict, notFound, validationFailed } from './problem.js';
import {
  RESOURCE_BODY_LIMIT_BYTES,
  assertWellFormedText,
  deleteReferencedResource,
  idParamsSchema,
  listedNamespaces,
  type IdParams,
} from './resource-common.js';
import { BACKEND_TYPES, DEFAULT_BACKEND_TYPE, isBackendType, validateVolumeInput } from '../domain/volume.js';
import { createVolume, deleteVolume, getVolume, listVolumes } from '../store/volumes.js';

export function registerVolumeRoutes(app: FastifyInstance, deps: ApiDeps): void {
  app.post('/volumes', { config: { auth: { scope: 'volumes:write' } }, bodyLimit: RESOURCE_BODY_LIMIT_BYTES }, async (request, reply) => {
    const body = parseBody(request.body, {
      namespace: { type: 'string', required: true },
      name: { type: 'string', required: true },
      backend_type: { type: 'string', nullable: true },
      size: { type: 'integer', nullable: true },
      labels: { type: 'string-map', nullable: true },
    });
    assertWellFormedText(body);
    assertNamespaceAccess(request, body.namespace);
    const labels = body.labels ?? {};
    const violations = validateVolumeInput({ namespace: body.namespace, name: body.name, labels });
    if (violations.length > 0) throw validationFailed(violations);
    const backendType = body.backend_type ?? DEFAULT_BACKEND_TYPE;
    if (!isBackendType(backendType)) {
      throw new ApiProblem(422, `backend_type must be one of ${BACKEND_TYPES.join(', ')}`);
    }
    const size = body.size ?? null;
    if (size !== null && size < 0) throw new ApiProblem(422, 'size must be a non-negative number of bytes');
    const outcome = createVolume(deps.db, { namespace: body.namespace, name: body.name, backend_type: backendType, size, labels }, deps.now());
    if (outcome.kind === 'namespace_missing') throw notFound('namespace', body.namespace);
    if (outcome.kind === 'duplicate') throw conflict('volume', `${body.namespace}/${body.name}`);
    const { id, created_at, namespace, name, backend_type } = outcome.record;
    return reply.code(201).send({ id, created_at, namespace, name, backend_type });
  });

  app.get('/volumes', { config: { auth: { scope: 'volumes:read' } } }, async (request) => listVolumes(deps.db, listedNamespaces(request)));

  app.get<IdParams>('/volumes/:id', { config: { auth: { scope: 'volumes:read' } }, schema: { params: idParamsSchema } }, async (request) => {
    const volume = getVolume(deps.db, request.params.id);
    if (!volume) throw notFound('volume', request.params.id);
    assertNamespaceAccess(request, volume.namespace);
    return volume;
  });

  app.delete<IdParams>(
    '/volumes/:id',
    { config: { auth: { scope: 'volumes:write' } }, schema: { params: idParamsSchema } },
    async (request, reply) =>
      deleteReferencedResource(request, reply, 'volume', (id) => getVolume(deps.db, id), (id, force) => deleteVolume(deps.db, id, force)),
  );
}
