// Deployments (spec "Deployments"): apply (create or rolling update), list, get, delete, and the per-deployment
// events, health-check results and metrics. Scopes deployments:write (POST, DELETE) and deployments:read (GETs).
// The stored spec is rendered through the store's toDeploymentResource, which drops the registry password;
// environment values are what the client sent (a `secretRef` stays a reference, secrets are never resolved here).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { assertNamespaceAccess, type ApiDeps } from './context.js';
import { badRequest, validationFailed } from './problem.js';
import { enumFilter } from './query.js';
import { forceFlag, idParamsSchema, listedNamespaces, type IdParams } from './resource-common.js';
import { booleanQuery, integerQuery, loadDeployment } from './deployment-common.js';
import { buildDeploymentMetrics, type MeasuredInstance } from './deployment-metrics.js';
import { validateDeployment } from '../domain/deployment-validation.js';
import { DEPLOYMENT_STATUSES, KINDS } from '../domain/deployment.js';
import { EVENT_LEVELS } from '../domain/events.js';
import {
  applyDeployment,
  listDeployments,
  listEvents,
  listHealthResults,
  markDeleted,
  toDeploymentResource,
  DEFAULT_EVENTS_LIMIT,
  type DeploymentRecord,
} from '../store/deployments.js';
import type { ObservedInstance, Runtime } from '../runtime/runtime.js';

/** Largest `limit` of the events and health-check lists (the spec leaves the maximum open). */
export const MAX_LIST_LIMIT = 1000;
/** A stats read slower than this leaves its instance out of the metrics answer rather than holding the request. */
export const STATS_TIMEOUT_MS = 5_000;

/** Instances that can be measured: docker answers stats only for running containers. */
function isRunning(instance: ObservedInstance): boolean {
  return instance.state === 'running';
}

async function measure(runtime: Runtime, instance: ObservedInstance, timeoutMs: number): Promise<MeasuredInstance | null> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  try {
    const stats = await Promise.race([runtime.stats(instance), deadline]);
    return stats === null ? null : { instance, stats };
  } catch {
    // The instance stopped between the observation and the read: it has no stats to show.
    return null;
  } finally {
    clearTimeout(timer);
  }
}

export function registerDeploymentRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const resource = (record: DeploymentRecord) => toDeploymentResource(record, deps.scheduler.instancesOf(record.id));

  app.post('/deployments', { config: { auth: { scope: 'deployments:write' } } }, async (request, reply) => {
    const force = forceFlag(request.query);
    const validation = validateDeployment(request.body);
    if (!validation.ok && validation.kind === 'malformed') throw badRequest(validation.message);
    // The namespace is checked before the rules, so a token learns nothing about a namespace it may not use.
    const body: unknown = request.body;
    const namespace = typeof body === 'object' && body !== null ? (body as { namespace?: unknown }).namespace : undefined;
    if (typeof namespace === 'string') assertNamespaceAccess(request, namespace);
    if (!validation.ok) throw validationFailed(validation.violations);
    const record = applyDeployment(deps.db, validation.spec, force, deps.now(), deps.secretBox);
    deps.scheduler.nudge();
    request.log.info({ deployment: record.id, parent: record.parent_id, force }, 'deployment applied');
    return reply.code(201).send(resource(record));
  });

  app.get('/deployments', { config: { auth: { scope: 'deployments:read' } } }, async (request) => {
    const statuses = enumFilter(request.query, 'status', DEPLOYMENT_STATUSES);
    const kinds = enumFilter(request.query, 'kind', KINDS);
    const visible = listedNamespaces(request);
    return listDeployments(deps.db, { visible, statuses, kinds }).map(resource);
  });

  app.get<IdParams>(
    '/deployments/:id',
    { config: { auth: { scope: 'deployments:read' } }, schema: { params: idParamsSchema } },
    async (request) => resource(loadDeployment(deps, request)),
  );

  app.delete<IdParams>(
    '/deployments/:id',
    { config: { auth: { scope: 'deployments:write' } }, schema: { params: idParamsSchema } },
    async (request, reply) => {
      const record = loadDeployment(deps, request);
      // Deleting a deployment that is already being torn down changes nothing and answers the same 204.
      if (record.status !== 'deleted') {
        markDeleted(deps.db, record.id, deps.now());
        deps.scheduler.nudge();
        request.log.info({ deployment: record.id }, 'deployment marked deleted');
      }
      return reply.code(204).send();
    },
  );

  app.get<IdParams>(
    '/deployments/:id/events',
    { config: { auth: { scope: 'deployments:read' } }, schema: { params: idParamsSchema } },
    async (request) => {
      const levels = enumFilter(request.query, 'level', EVENT_LEVELS);
      const limit = integerQuery(request.query, 'limit', { min: 1, max: MAX_LIST_LIMIT }, DEFAULT_EVENTS_LIMIT);
      const record = loadDeployment(deps, request);
      return listEvents(deps.db, record.id, { levels, limit });
    },
  );

  app.get<IdParams>(
    '/deployments/:id/health-checks',
    { config: { auth: { scope: 'deployments:read' } }, schema: { params: idParamsSchema } },
    async (request) => {
      const limit = integerQuery(request.query, 'limit', { min: 1, max: MAX_LIST_LIMIT }, DEFAULT_EVENTS_LIMIT);
      const latest = booleanQuery(request.query, 'latest', false);
      const record = loadDeployment(deps, request);
      return listHealthResults(deps.db, record.id, { limit, latest });
    },
  );

  app.get<IdParams>(
    '/deployments/:id/metrics',
    { config: { auth: { scope: 'deployments:read' } }, schema: { params: idParamsSchema } },
    async (request: FastifyRequest<IdParams>) => {
      const record = loadDeployment(deps, request);
      const runtime = deps.scheduler.runtime(record.spec.runtime);
      const running = deps.scheduler.instancesOf(record.id).filter(isRunning);
      const measured = runtime === undefined ? [] : await Promise.all(running.map((i) => measure(runtime, i, STATS_TIMEOUT_MS)));
      return buildDeploymentMetrics(
        { id: record.id, name: record.spec.name, restartCount: record.restart_count },
        measured.filter((m): m is MeasuredInstance => m !== null),
      );
    },
  );
}
