// How the server builds its scheduler from the environment: the Docker runtime (DOCKER_HOST, else
// /var/run/docker.sock), the tick from settings, SVC_APPLY_TIMEOUT, and the data directory next to the database
// (`<db dir>/svc-data`, for rendered config files). `SVC_SCHEDULER=off` runs the API alone (tests of the API, or
// a host without Docker): nothing is reconciled, and the API sees idleScheduler().
import { dirname, join } from 'node:path';
import type { SecretBox } from '../crypto/secret-box.js';
import { DEFAULT_APPLY_TIMEOUT_MS } from '../domain/deployment.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import { createDockerRuntime } from '../runtime/docker/index.js';
import type { Db } from '../store/db.js';
import { createScheduler, type Scheduler, type SchedulerLog } from './loop.js';

export interface ServerSchedulerOptions {
  db: Db;
  secretBox: SecretBox;
  databasePath: string;
  intervalSeconds: number;
  metrics: MetricsRegistry;
  log: SchedulerLog;
}

export class SchedulerSettingError extends Error {}

/** SVC_APPLY_TIMEOUT (seconds) in ms; the default when unset. Throws SchedulerSettingError when malformed. */
export function applyTimeoutFrom(env: NodeJS.ProcessEnv): number {
  const raw = env.SVC_APPLY_TIMEOUT;
  if (raw === undefined || raw.trim() === '') return DEFAULT_APPLY_TIMEOUT_MS;
  if (!/^\s*[1-9]\d{0,6}\s*$/.test(raw)) {
    throw new SchedulerSettingError(`SVC_APPLY_TIMEOUT: expected a positive integer (seconds), got '${raw.slice(0, 40)}'`);
  }
  return Number(raw) * 1000;
}

export function schedulerEnabled(env: NodeJS.ProcessEnv): boolean {
  const value = env.SVC_SCHEDULER?.trim().toLowerCase();
  return !(value === 'off' || value === '0' || value === 'false');
}

/** Null when SVC_SCHEDULER=off. */
export function createServerScheduler(options: ServerSchedulerOptions, env: NodeJS.ProcessEnv): Scheduler | null {
  if (!schedulerEnabled(env)) return null;
  return createScheduler({
    db: options.db,
    secretBox: options.secretBox,
    runtimes: [createDockerRuntime()],
    intervalMs: options.intervalSeconds * 1000,
    dataDir: join(dirname(options.databasePath), 'svc-data'),
    applyTimeoutMs: applyTimeoutFrom(env),
    metrics: options.metrics,
    log: options.log,
  });
}
