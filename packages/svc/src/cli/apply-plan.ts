// What `apply` will do to each deployment: create, update (which fields change) or leave unchanged. Pure.
import type { DeploymentBody } from './manifest.js';
import type { ApiRecord } from './output.js';

export type PlanAction =
  | { action: 'create' }
  | { action: 'update'; existingId: string; changes: string[] }
  | { action: 'unchanged'; existingId: string };

/** The live deployment a manifest entry refers to: same namespace and name, not deleted, newest first. */
export function findExisting(existing: readonly ApiRecord[], namespace: string, name: string): ApiRecord | undefined {
  return existing
    .filter((d) => d.namespace === namespace && d.name === name && d.status !== 'deleted')
    .sort((a, b) => String(b.created_at ?? '').localeCompare(String(a.created_at ?? '')))[0];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** null, undefined, [] and {} all mean "nothing"; objects are compared without regard to key order. */
function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (Array.isArray(value) && value.length === 0) || (isObj(value) && Object.keys(value).length === 0);
}

/** Exact equality (maps must have the same keys). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (isObj(a) && isObj(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => sameValue(a[k], b[k]));
  }
  return a === b;
}

/** The desired value is contained in the actual one: the server may add fields it fills in itself. */
export function containedIn(desired: unknown, actual: unknown): boolean {
  if (isEmpty(desired)) return isEmpty(actual) || !Array.isArray(actual);
  if (Array.isArray(desired)) return Array.isArray(actual) && desired.length === actual.length && desired.every((v, i) => containedIn(v, actual[i]));
  if (isObj(desired)) return isObj(actual) && Object.entries(desired).every(([k, v]) => containedIn(v, actual[k]));
  return desired === actual;
}

const EXACT: readonly (keyof DeploymentBody)[] = ['image', 'runtime', 'kind', 'replicas', 'command', 'labels', 'environment'];
const CONTAINED: readonly (keyof DeploymentBody)[] = ['ports', 'volumes', 'resources', 'health_checks', 'config', 'network'];

function show(value: unknown): string {
  if (value === undefined || value === null) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function changedFields(body: DeploymentBody, existing: ApiRecord): string[] {
  const changes: string[] = [];
  for (const key of EXACT) {
    const desired = body[key];
    const actual = key === 'kind' ? existing.kind ?? 'worker' : existing[key];
    if (!sameValue(desired, actual)) {
      const short = typeof desired !== 'object' && typeof actual !== 'object';
      changes.push(short ? `${key}: ${show(actual)} -> ${show(desired)}` : `${key} changed`);
    }
  }
  for (const key of CONTAINED) if (!containedIn(body[key], existing[key])) changes.push(`${key} changed`);
  return changes;
}

export function planDeployment(body: DeploymentBody, existing: ApiRecord | undefined): PlanAction {
  if (!existing) return { action: 'create' };
  const existingId = typeof existing.id === 'string' ? existing.id : '';
  const changes = changedFields(body, existing);
  return changes.length === 0 ? { action: 'unchanged', existingId } : { action: 'update', existingId, changes };
}

/** Outcome of waiting for a deployment after it was posted. */
export type Settled = 'ok' | 'failed' | 'pending';

// Terminal per the spec, plus `deleted` (someone or a health check removed it while we waited).
const FAILURE = ['failed', 'crash_loop_back_off', 'insufficient_resources', 'deleted'];

/**
 * A worker has arrived when it is `running`. A job runs to completion, so `apply` waits for its outcome:
 * `completed` is success and `running` is still in progress (otherwise a job that fails a moment later would be
 * reported as applied).
 */
export function settled(status: string, kind: string = 'worker'): Settled {
  if (status === 'completed' || (status === 'running' && kind !== 'job')) return 'ok';
  if (FAILURE.includes(status)) return 'failed';
  return 'pending';
}

/** SVC_APPLY_TIMEOUT in seconds (default 300); malformed values fall back to the default. */
export function applyTimeoutMs(env: NodeJS.ProcessEnv): number {
  const raw = env.SVC_APPLY_TIMEOUT;
  if (raw && /^\d+$/.test(raw) && Number(raw) > 0) return Number(raw) * 1000;
  return 300_000;
}
