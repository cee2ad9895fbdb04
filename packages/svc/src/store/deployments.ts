// The deployments repository: the `deployments` row (validated spec as JSON plus what the scheduler persists),
// its scheduler events and its health-check results. SQL only; decisions live in scheduler/plan.ts.
//
// Every status change made through this module writes the row AND enqueues `deployment.status_changed` in one
// transaction (updateStatus). The scheduler's executor is the one exception: its plan already carries the
// `deployment.status_changed` event as an `emit` action, so it writes the state with saveSchedulerState and
// enqueues the plan's events itself — inside ONE transaction of its own (scheduler/executor.ts).
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import {
  RUNTIMES,
  isDeploymentStatus,
  isKind,
  publicSpec,
  type Deployment,
  type DeploymentInstance,
  type DeploymentSpec,
  type DeploymentStatus,
  type Kind,
} from '../domain/deployment.js';
import { webhookEvent, type EventLevel, type SchedulerEventInput } from '../domain/events.js';
import type { ObservedInstance } from '../runtime/runtime.js';
import type { SchedulerState } from '../scheduler/plan.js';
import type { Db } from './db.js';
import { ensureNamespace } from './namespaces.js';
import { enqueueEvent } from './outbox.js';
import { jsonList, prepared } from './prepared.js';

// ---------------------------------------------------------------------------------------------------------------
// Deployment records
// ---------------------------------------------------------------------------------------------------------------

/** One stored deployment: the immutable spec plus everything assigned or persisted by the service. */
export interface DeploymentRecord {
  id: string;
  spec: DeploymentSpec;
  status: DeploymentStatus;
  restart_count: number;
  parent_id: string | null;
  image_digest: string | null;
  created_at: string;
  updated_at: string;
  /** Scheduler bookkeeping (scheduler/plan.ts SchedulerState minus status and restart count). */
  retry_count: number;
  /** Unix ms of the last status change (the readiness deadline counts from entering `creating`). */
  status_since: number;
  /** Unix ms before which the scheduler creates no instance; null = none. */
  backoff_until: number | null;
  /** Applied with `force=true`: replaces its parent at once instead of draining it step by step. */
  force: boolean;
}

interface DeploymentRow {
  id: string;
  spec: string;
  status: string;
  restart_count: number;
  parent_id: string | null;
  image_digest: string | null;
  created_at: string;
  updated_at: string;
  retry_count: number;
  status_since: number | null;
  backoff_until: number | null;
  force: number;
}

const COLUMNS =
  'id, spec, status, restart_count, parent_id, image_digest, created_at, updated_at, retry_count, status_since, backoff_until, force';

/**
 * A row this server cannot read (spec not JSON, not the shape createDeployment writes, unknown status): written
 * by hand or by another version. The message names the deployment, never the spec text (it may hold a registry
 * password). The scheduler skips such rows; the API answers a 500 problem for them.
 */
export class UnreadableDeploymentError extends Error {
  constructor(
    readonly deploymentId: string,
    readonly reason: string,
  ) {
    super(`deployment ${deploymentId} is stored in a form this server cannot read (${reason})`);
    this.name = 'UnreadableDeploymentError';
  }
}

/**
 * The spec column is written only by createDeployment, from a spec validateDeployment produced, and never
 * updated. Parsed specs are cached per row (immutable), so a scheduler pass over 500 rows parses nothing twice.
 */
const specCache = new WeakMap<Db, Map<string, { text: string; spec: DeploymentSpec }>>();

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What the scheduler and the API dereference without looking: a row edited by hand must fail here, with the
 * deployment id, instead of deep inside a pass. Not a second validation of every rule (createDeployment stores
 * only validated specs); only the shape.
 */
function specShapeProblem(value: unknown): string | null {
  if (!isObject(value)) return 'spec is not an object';
  for (const key of ['name', 'namespace', 'image'] as const) if (typeof value[key] !== 'string') return `spec.${key} is not a string`;
  if (!isRuntimeName(value.runtime)) return 'spec.runtime is unknown';
  if (!isKind(value.kind)) return 'spec.kind is unknown';
  if (typeof value.replicas !== 'number' || !Number.isSafeInteger(value.replicas)) return 'spec.replicas is not an integer';
  for (const key of ['ports', 'volumes', 'health_checks'] as const) if (!Array.isArray(value[key])) return `spec.${key} is not an array`;
  for (const key of ['config', 'labels', 'environment', 'resources', 'network'] as const) {
    if (!isObject(value[key])) return `spec.${key} is not an object`;
  }
  if (value.command !== undefined && !Array.isArray(value.command)) return 'spec.command is not an array';
  return null;
}

function isRuntimeName(value: unknown): boolean {
  return typeof value === 'string' && (RUNTIMES as readonly string[]).includes(value);
}

function parseSpec(db: Db, id: string, text: string): DeploymentSpec {
  let cache = specCache.get(db);
  if (!cache) {
    cache = new Map();
    specCache.set(db, cache);
  }
  const hit = cache.get(id);
  if (hit && hit.text === text) return hit.spec;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UnreadableDeploymentError(id, 'spec is not JSON');
  }
  const problem = specShapeProblem(parsed);
  if (problem !== null) throw new UnreadableDeploymentError(id, problem);
  // Written from a validated DeploymentSpec by createDeployment (see above), shape checked; never edited afterwards.
  const spec = parsed as unknown as DeploymentSpec;
  cache.set(id, { text, spec });
  return spec;
}

function toRecord(db: Db, row: DeploymentRow): DeploymentRecord {
  if (!isDeploymentStatus(row.status)) throw new UnreadableDeploymentError(row.id, 'unknown status');
  return {
    id: row.id,
    spec: parseSpec(db, row.id, row.spec),
    status: row.status,
    restart_count: row.restart_count,
    parent_id: row.parent_id,
    image_digest: row.image_digest,
    created_at: row.created_at,
    updated_at: row.updated_at,
    retry_count: row.retry_count,
    status_since: row.status_since ?? Date.parse(row.created_at),
    backoff_until: row.backoff_until,
    force: row.force !== 0,
  };
}

/** Called for each row a listing skipped because it cannot be read. */
export type UnreadableRowHandler = (error: UnreadableDeploymentError) => void;

/** Records of the rows that can be read; the others go to `onUnreadable` (a listing never fails for one bad row). */
function readableRecords(db: Db, rows: readonly DeploymentRow[], onUnreadable: UnreadableRowHandler | undefined): DeploymentRecord[] {
  const records: DeploymentRecord[] = [];
  for (const row of rows) {
    try {
      records.push(toRecord(db, row));
    } catch (error) {
      if (!(error instanceof UnreadableDeploymentError)) throw error;
      onUnreadable?.(error);
    }
  }
  return records;
}

/** Whether a row with this id exists, readable or not (no spec parsing). */
export function deploymentExists(db: Db, id: string): boolean {
  return prepared<[string], { one: number }>(db, 'SELECT 1 AS one FROM deployments WHERE id = ?').get(id) !== undefined;
}

/** The associated data a deployment's registry password is sealed with: the ciphertext only opens on its own row. */
export function registryPasswordAssociatedData(deploymentId: string): string {
  return `registry:${deploymentId}`;
}

/**
 * The spec as stored: a registry password is sealed with the SecretBox, so the database file never holds it in
 * clear (scheduler/instance-spec.ts opens it when it resolves the instance). Without a box a password is refused
 * rather than stored in clear.
 */
function storedSpec(spec: DeploymentSpec, deploymentId: string, box: SecretBox | undefined): DeploymentSpec {
  const auth = spec.config.registry_auth;
  if (auth?.password === undefined) return spec;
  if (box === undefined) throw new Error('a registry password can only be stored sealed: no secret box given');
  const { password, ...rest } = auth;
  const sealed = box.seal(Buffer.from(password, 'utf8'), registryPasswordAssociatedData(deploymentId)).toString('base64');
  return { ...spec, config: { ...spec.config, registry_auth: { ...rest, password_sealed: sealed } } };
}

export interface NewDeployment {
  spec: DeploymentSpec;
  /** Seals the registry password (required when the spec has one). */
  secretBox?: SecretBox;
  /** The deployment this one replaces (rolling update); null for a first deployment. */
  parentId: string | null;
  force: boolean;
}

/** Inserts a `pending` deployment and ensures its namespace (spec: created automatically). */
export function createDeployment(db: Db, input: NewDeployment, now: Date = new Date()): DeploymentRecord {
  return db.transaction((): DeploymentRecord => {
    ensureNamespace(db, input.spec.namespace, now);
    const id = randomUUID();
    const at = now.toISOString();
    prepared(
      db,
      `INSERT INTO deployments (id, namespace, name, kind, runtime, status, spec, restart_count, parent_id, image_digest,
         created_at, updated_at, retry_count, status_since, backoff_until, force)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, 0, ?, NULL, ?, ?, 0, ?, NULL, ?)`,
    ).run(
      id,
      input.spec.namespace,
      input.spec.name,
      input.spec.kind,
      input.spec.runtime,
      JSON.stringify(storedSpec(input.spec, id, input.secretBox)),
      input.parentId,
      at,
      at,
      now.getTime(),
      input.force ? 1 : 0,
    );
    const created = getDeployment(db, id);
    if (!created) throw new Error(`deployment ${id} vanished after insert`);
    return created;
  })();
}

/**
 * `POST /deployments`: creates the deployment, as the child of the current deployment with the same namespace
 * and name when one exists (spec: "Reusing a name and namespace starts a rolling update"). The lookup and the
 * insert share one transaction, so two concurrent applies cannot both become children of nothing.
 */
export function applyDeployment(
  db: Db,
  spec: DeploymentSpec,
  force: boolean,
  now: Date = new Date(),
  secretBox?: SecretBox,
): DeploymentRecord {
  return db.transaction((): DeploymentRecord => {
    const parent = findActiveByName(db, spec.namespace, spec.name);
    return createDeployment(db, { spec, parentId: parent?.id ?? null, force, ...(secretBox !== undefined ? { secretBox } : {}) }, now);
  })();
}

/** Null when unknown; throws UnreadableDeploymentError when the row exists but cannot be read. */
export function getDeployment(db: Db, id: string): DeploymentRecord | null {
  const row = prepared<[string], DeploymentRow>(db, `SELECT ${COLUMNS} FROM deployments WHERE id = ?`).get(id);
  return row ? toRecord(db, row) : null;
}

/**
 * The deployment a new apply of `namespace/name` replaces: the newest one that is not `deleted` (terminal ones
 * included — the child then simply starts, there is nothing left to drain).
 */
export function findActiveByName(db: Db, namespace: string, name: string): DeploymentRecord | null {
  const row = prepared<[string, string], DeploymentRow>(
    db,
    `SELECT ${COLUMNS} FROM deployments WHERE namespace = ? AND name = ? AND status <> 'deleted'
     ORDER BY created_at DESC, rowid DESC LIMIT 1`,
  ).get(namespace, name);
  return row ? toRecord(db, row) : null;
}

/** Deployments whose `parent_id` is `parentId` (the children of a rolling update), oldest first; unreadable ones skipped. */
export function listChildren(db: Db, parentId: string, onUnreadable?: UnreadableRowHandler): DeploymentRecord[] {
  const rows = prepared<[string], DeploymentRow>(db, `SELECT ${COLUMNS} FROM deployments WHERE parent_id = ? ORDER BY created_at, rowid`).all(parentId);
  return readableRecords(db, rows, onUnreadable);
}

/**
 * A deployment with everything that decides whether its parents still serve (scheduler/plan.ts servingParents):
 * its ancestors (following parent_id) and its children. Cheaper than every deployment when one create fails.
 */
export function rolloutFamily(db: Db, id: string): DeploymentRecord[] {
  const self = getDeployment(db, id);
  if (self === null) return [];
  const family = [self, ...listChildren(db, id, () => undefined)];
  const seen = new Set(family.map((d) => d.id));
  for (let parentId = self.parent_id; parentId !== null && !seen.has(parentId); ) {
    let parent: DeploymentRecord | null;
    try {
      parent = getDeployment(db, parentId);
    } catch (error) {
      // An unreadable ancestor serves nothing this server could drain: the family ends there.
      if (error instanceof UnreadableDeploymentError) break;
      throw error;
    }
    if (parent === null) break;
    seen.add(parent.id);
    family.push(parent);
    parentId = parent.parent_id;
  }
  return family;
}

export interface DeploymentFilter {
  /** Namespaces the caller may see: null = all (api/context.ts visibleNamespaces). */
  visible?: readonly string[] | null;
  /** `namespace` / `namespace[]` query: any of these; empty or absent = no filter. */
  namespaces?: readonly string[];
  statuses?: readonly DeploymentStatus[];
  kinds?: readonly Kind[];
}

/**
 * Oldest first (creation order), which is also the order the scheduler reconciles in. Rows that cannot be read
 * are left out and passed to `onUnreadable`, so one bad row never hides (or stops reconciling) the others.
 */
export function listDeployments(db: Db, filter: DeploymentFilter = {}, onUnreadable?: UnreadableRowHandler): DeploymentRecord[] {
  const where: string[] = [];
  const params: string[] = [];
  const inList = (column: string, values: readonly string[] | null | undefined) => {
    if (values === null || values === undefined) return;
    where.push(`${column} IN (SELECT value FROM json_each(?))`);
    params.push(jsonList(values));
  };
  inList('namespace', filter.visible);
  if (filter.namespaces && filter.namespaces.length > 0) inList('namespace', filter.namespaces);
  if (filter.statuses && filter.statuses.length > 0) inList('status', filter.statuses);
  if (filter.kinds && filter.kinds.length > 0) inList('kind', filter.kinds);
  const sql = `SELECT ${COLUMNS} FROM deployments ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
               ORDER BY created_at, rowid`;
  return readableRecords(db, prepared<string[], DeploymentRow>(db, sql).all(...params), onUnreadable);
}

export interface StatusUpdate {
  restartCount?: number;
  retryCount?: number;
  backoffUntil?: number | null;
}

/**
 * Moves a deployment to `status` and, when that is a change, enqueues `deployment.status_changed` (old, new,
 * restart_count) in the same transaction. Returns the updated record, or null when the id is unknown.
 */
export function updateStatus(
  db: Db,
  id: string,
  status: DeploymentStatus,
  update: StatusUpdate = {},
  now: Date = new Date(),
): DeploymentRecord | null {
  return db.transaction((): DeploymentRecord | null => {
    const current = getDeployment(db, id);
    if (!current) return null;
    const changed = current.status !== status;
    const restartCount = update.restartCount ?? current.restart_count;
    prepared(
      db,
      `UPDATE deployments SET status = ?, restart_count = ?, retry_count = ?, backoff_until = ?, status_since = ?,
         updated_at = ? WHERE id = ?`,
    ).run(
      status,
      restartCount,
      update.retryCount ?? current.retry_count,
      update.backoffUntil === undefined ? current.backoff_until : update.backoffUntil,
      changed ? now.getTime() : current.status_since,
      now.toISOString(),
      id,
    );
    if (changed) {
      const { spec } = current;
      enqueueEvent(
        db,
        webhookEvent(
          'deployment.status_changed',
          { id, namespace: spec.namespace, name: spec.name, kind: spec.kind },
          { old_status: current.status, new_status: status, restart_count: restartCount },
        ),
        now,
      );
    }
    return getDeployment(db, id);
  })();
}

/** `DELETE /deployments/{id}`: marks it `deleted` (the scheduler removes its instances, then purges it). */
export function markDeleted(db: Db, id: string, now: Date = new Date()): DeploymentRecord | null {
  return updateStatus(db, id, 'deleted', {}, now);
}

/**
 * Writes the scheduler's whole state of a deployment WITHOUT enqueuing anything: for the executor only, which
 * enqueues the plan's own `deployment.status_changed` event in the same transaction (see the file comment).
 * Returns false when the deployment is gone.
 */
export function saveSchedulerState(db: Db, id: string, state: SchedulerState, now: Date = new Date()): boolean {
  return (
    prepared(
      db,
      `UPDATE deployments SET status = ?, restart_count = ?, retry_count = ?, status_since = ?, backoff_until = ?,
         updated_at = ? WHERE id = ?`,
    ).run(state.status, state.restartCount, state.retryCount, state.statusSince, state.backoffUntil, now.toISOString(), id)
      .changes > 0
  );
}

/** The scheduler state of a record, as scheduler/plan.ts reads it. */
export function schedulerStateOf(record: DeploymentRecord): SchedulerState {
  return {
    status: record.status,
    restartCount: record.restart_count,
    retryCount: record.retry_count,
    statusSince: record.status_since,
    backoffUntil: record.backoff_until,
  };
}

/** Records the digest of the image the instances run (`sha256:<hex>`); other text is refused. */
export function setImageDigest(db: Db, id: string, digest: string, now: Date = new Date()): boolean {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) return false;
  return (
    prepared(db, 'UPDATE deployments SET image_digest = ?, updated_at = ? WHERE id = ? AND (image_digest IS NOT ?)').run(
      digest,
      now.toISOString(),
      id,
      digest,
    ).changes > 0
  );
}

/** Removes the deployment with its events and health-check results (after its instances are gone). */
export function purgeDeployment(db: Db, id: string): boolean {
  return db.transaction((): boolean => {
    prepared(db, 'DELETE FROM deployment_events WHERE deployment_id = ?').run(id);
    prepared(db, 'DELETE FROM health_check_results WHERE deployment_id = ?').run(id);
    specCache.get(db)?.delete(id);
    return prepared(db, 'DELETE FROM deployments WHERE id = ?').run(id).changes > 0;
  })();
}

/**
 * The API's Deployment JSON: the spec, the assigned fields and the instances of the latest observation
 * (exited instances are not listed: they serve nothing). `registry_auth.password` never leaves the service.
 */
export function toDeploymentResource(record: DeploymentRecord, observed: readonly ObservedInstance[]): Deployment {
  const instances: DeploymentInstance[] = observed
    .filter((i) => i.state !== 'exited' && i.state !== 'dead' && i.state !== 'removing')
    .map((i) => (i.address === null ? { id: i.id } : { id: i.id, address: i.address }));
  const resource: Deployment = {
    ...publicSpec(record.spec),
    id: record.id,
    created_at: record.created_at,
    updated_at: record.updated_at,
    status: record.status,
    restart_count: record.restart_count,
    instances,
    parent_id: record.parent_id,
  };
  if (record.image_digest !== null) resource.image_digest = record.image_digest;
  return resource;
}

// ---------------------------------------------------------------------------------------------------------------
// Scheduler events
// ---------------------------------------------------------------------------------------------------------------

export interface DeploymentEventRecord {
  id: string;
  deployment_id: string;
  timestamp: string;
  level: EventLevel;
  component: string;
  reason: string;
  message: string;
}

/** Default of `GET /deployments/{id}/events?limit` (spec "Limits"). */
export const DEFAULT_EVENTS_LIMIT = 50;

export function appendEvent(db: Db, event: SchedulerEventInput, now: Date = new Date()): DeploymentEventRecord {
  const record: DeploymentEventRecord = {
    id: randomUUID(),
    deployment_id: event.deploymentId,
    timestamp: now.toISOString(),
    level: event.level,
    component: event.component,
    reason: event.reason,
    message: event.message,
  };
  prepared(
    db,
    'INSERT INTO deployment_events (id, deployment_id, timestamp, level, component, reason, message) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(record.id, record.deployment_id, record.timestamp, record.level, record.component, record.reason, record.message);
  return record;
}

export interface EventQuery {
  /** Exact levels to return (the `level` query); empty or absent = every level. */
  levels?: readonly EventLevel[];
  /** Default 50. */
  limit?: number;
}

/** Newest first (`svc deployment events` shows the latest at the top, as `kubectl get events --sort-by` users read). */
export function listEvents(db: Db, deploymentId: string, query: EventQuery = {}): DeploymentEventRecord[] {
  const limit = query.limit ?? DEFAULT_EVENTS_LIMIT;
  if (query.levels && query.levels.length > 0) {
    return prepared<[string, string, number], DeploymentEventRecord>(
      db,
      `SELECT id, deployment_id, timestamp, level, component, reason, message FROM deployment_events
       WHERE deployment_id = ? AND level IN (SELECT value FROM json_each(?)) ORDER BY timestamp DESC, rowid DESC LIMIT ?`,
    ).all(deploymentId, jsonList(query.levels), limit);
  }
  return prepared<[string, number], DeploymentEventRecord>(
    db,
    `SELECT id, deployment_id, timestamp, level, component, reason, message FROM deployment_events
     WHERE deployment_id = ? ORDER BY timestamp DESC, rowid DESC LIMIT ?`,
  ).all(deploymentId, limit);
}

// ---------------------------------------------------------------------------------------------------------------
// Health-check results
// ---------------------------------------------------------------------------------------------------------------

export type HealthResultStatus = 'success' | 'failure' | 'timeout';

export interface HealthCheckResultRecord {
  id: string;
  deployment_id: string;
  instance_id: string;
  check_index: number;
  check_type: 'tcp' | 'http' | 'command';
  status: HealthResultStatus;
  message: string | null;
  created_at: string;
  started_at: string;
  finished_at: string;
}

export type NewHealthCheckResult = Omit<HealthCheckResultRecord, 'id' | 'created_at'>;

const RESULT_COLUMNS = 'id, deployment_id, instance_id, check_index, check_type, status, message, created_at, started_at, finished_at';

export function appendHealthResult(db: Db, result: NewHealthCheckResult, now: Date = new Date()): HealthCheckResultRecord {
  const record: HealthCheckResultRecord = { id: randomUUID(), created_at: now.toISOString(), ...result };
  prepared(db, `INSERT INTO health_check_results (${RESULT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
    record.id,
    record.deployment_id,
    record.instance_id,
    record.check_index,
    record.check_type,
    record.status,
    record.message,
    record.created_at,
    record.started_at,
    record.finished_at,
  );
  return record;
}

export interface HealthResultQuery {
  /** Default 50, like events. */
  limit?: number;
  /** Only the newest result of each (instance, check). */
  latest?: boolean;
}

/** Newest first. */
export function listHealthResults(db: Db, deploymentId: string, query: HealthResultQuery = {}): HealthCheckResultRecord[] {
  const limit = query.limit ?? DEFAULT_EVENTS_LIMIT;
  if (query.latest === true) {
    return prepared<[string, number], HealthCheckResultRecord>(
      db,
      `SELECT ${RESULT_COLUMNS} FROM (
         SELECT *, row_number() OVER (PARTITION BY instance_id, check_index ORDER BY created_at DESC, rowid DESC) AS n
         FROM health_check_results WHERE deployment_id = ?)
       WHERE n = 1 ORDER BY created_at DESC, instance_id, check_index LIMIT ?`,
    ).all(deploymentId, limit);
  }
  return prepared<[string, number], HealthCheckResultRecord>(
    db,
    `SELECT ${RESULT_COLUMNS} FROM health_check_results WHERE deployment_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`,
  ).all(deploymentId, limit);
}

/** The newest `perCheck` results of every (instance, check), newest first — what a restarted scheduler rebuilds health streaks from. */
export function recentHealthResults(db: Db, perCheck: number): HealthCheckResultRecord[] {
  return prepared<[number], HealthCheckResultRecord>(
    db,
    `SELECT ${RESULT_COLUMNS} FROM (
       SELECT *, row_number() OVER (PARTITION BY instance_id, check_index ORDER BY created_at DESC, rowid DESC) AS n
       FROM health_check_results)
     WHERE n <= ? ORDER BY instance_id, check_index, created_at DESC`,
  ).all(perCheck);
}

/** Keeps the newest `keep` results per deployment (results are per tick, so they would grow without end). */
export function trimHealthResults(db: Db, keep: number): number {
  return prepared<[number], never>(
    db,
    `DELETE FROM health_check_results WHERE id IN (
       SELECT id FROM (
         SELECT id, row_number() OVER (PARTITION BY deployment_id ORDER BY created_at DESC, rowid DESC) AS n
         FROM health_check_results)
       WHERE n > ?)`,
  ).run(keep).changes;
}
