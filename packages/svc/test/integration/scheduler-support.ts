// Drives the real scheduler (scheduler/loop.ts) against the real Docker daemon and a temp SQLite file, without
// the HTTP API: deployments are written with the store, then we wait for the statuses the scheduler reaches.
// Every Docker object is named with the `d2t` prefix (namespace `d2t-<random>`), and close() removes them.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createSecretBox, type SecretBox } from '../../src/crypto/secret-box.js';
import type { DeploymentSpec, DeploymentStatus } from '../../src/domain/deployment.js';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/registry.js';
import { createDockerRuntime } from '../../src/runtime/docker/index.js';
import type { Runtime } from '../../src/runtime/runtime.js';
import { createScheduler, type Scheduler } from '../../src/scheduler/loop.js';
import { migrate, openDatabase, type Db } from '../../src/store/db.js';
import { applyDeployment, getDeployment, listEvents, type DeploymentRecord } from '../../src/store/deployments.js';
import { baseDeploymentSpec } from '../support/deployment-spec.js';

const run = promisify(execFile);

export async function docker(...args: string[]): Promise<string> {
  const { stdout } = await run('docker', args, { maxBuffer: 16 * 1024 * 1024 });
  return stdout.trim();
}

/** A worker that stops at once on SIGTERM (busybox sh runs the trap between the 1 s sleeps). */
export const WORKER_COMMAND = ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 1; done'];

export function testSpec(namespace: string, overrides: Partial<DeploymentSpec> = {}): DeploymentSpec {
  return baseDeploymentSpec({ namespace, command: WORKER_COMMAND, ...overrides });
}

export interface HarnessOptions {
  intervalMs?: number;
  applyTimeoutMs?: number;
  /** Reuse a database directory (restart tests). */
  dir?: string;
  runtime?: Runtime;
}

export class SchedulerHarness {
  readonly db: Db;
  readonly box: SecretBox;
  readonly scheduler: Scheduler;
  readonly metrics: MetricsRegistry;
  readonly logs: string[] = [];

  constructor(
    readonly dir: string,
    key: Buffer,
    options: HarnessOptions = {},
  ) {
    this.db = openDatabase(join(dir, 'svc.db'));
    migrate(this.db);
    this.box = createSecretBox(key);
    this.metrics = createMetricsRegistry();
    const remember = (level: string) => (message: string) => {
      this.logs.push(`${level}: ${message}`);
    };
    this.scheduler = createScheduler({
      db: this.db,
      secretBox: this.box,
      runtimes: [options.runtime ?? createDockerRuntime()],
      intervalMs: options.intervalMs ?? 1_000,
      dataDir: join(dir, 'svc-data'),
      ...(options.applyTimeoutMs !== undefined ? { applyTimeoutMs: options.applyTimeoutMs } : {}),
      stopGraceSeconds: 2,
      metrics: this.metrics,
      log: { info: remember('info'), warn: remember('warn'), error: remember('error') },
    });
  }

  static create(options: HarnessOptions = {}): SchedulerHarness {
    const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'svc-d2t-'));
    return new SchedulerHarness(dir, KEY, options);
  }

  deploy(spec: DeploymentSpec, force = false): DeploymentRecord {
    const record = applyDeployment(this.db, spec, force);
    this.scheduler.handle.nudge();
    return record;
  }

  get(id: string): DeploymentRecord {
    const record = getDeployment(this.db, id);
    if (record === null) throw new Error(`deployment ${id} is gone`);
    return record;
  }

  reasons(id: string): string[] {
    return listEvents(this.db, id, { limit: 1000 }).map((e) => e.reason);
  }

  /** Payloads of the webhook outbox entries of one kind for a deployment, oldest first. */
  outbox(kind: string, deploymentId: string): Record<string, unknown>[] {
    const rows = this.db
      .prepare('SELECT payload FROM events WHERE kind = ? AND deployment_id = ? ORDER BY created_at, rowid')
      .all(kind, deploymentId) as { payload: string }[];
    return rows.map((r) => JSON.parse(r.payload) as Record<string, unknown>);
  }

  /** Polls until the deployment has one of `statuses` (or is purged, when `purged` is listed). */
  async waitFor(id: string, statuses: readonly (DeploymentStatus | 'purged')[], timeoutMs = 60_000): Promise<DeploymentStatus | 'purged'> {
    const deadline = Date.now() + timeoutMs;
    let last: DeploymentStatus | 'purged' = 'purged';
    while (Date.now() < deadline) {
      const record = getDeployment(this.db, id);
      last = record === null ? 'purged' : record.status;
      if (statuses.includes(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const events = listEvents(this.db, id, { limit: 20 }).map((e) => `${e.reason}: ${e.message}`);
    throw new Error(`deployment ${id} still '${last}' after ${timeoutMs} ms, waiting for ${statuses.join('|')}\n${events.join('\n')}`);
  }

  async waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** Container ids of a deployment; `all` includes stopped ones. */
  async containers(deploymentId: string, all = false): Promise<string[]> {
    const out = await docker('ps', ...(all ? ['-a'] : []), '-q', '--no-trunc', '--filter', `label=svc_deployment=${deploymentId}`);
    return out === '' ? [] : out.split('\n');
  }

  async close(keepDir = false): Promise<void> {
    await this.scheduler.stop(5_000);
    this.db.close();
    if (!keepDir) rmSync(this.dir, { recursive: true, force: true });
  }
}

const KEY = randomBytes(32);

export function uniqueNamespace(): string {
  return `d2t-${randomBytes(3).toString('hex')}`;
}

/**
 * One namespace (so one Docker network) for a whole test file, made on first use and recorded in `namespaces`
 * (which the file cleans up): networks come from a small shared address pool.
 */
export function fileNamespace(namespaces: string[]): string {
  if (namespaces.length === 0) namespaces.push(uniqueNamespace());
  return namespaces[0] ?? '';
}

/** Removes every container, network and volume of the given namespaces. */
export async function cleanupNamespaces(namespaces: readonly string[]): Promise<void> {
  for (const namespace of namespaces) {
    const ids = await docker('ps', '-aq', '--filter', `name=^/${namespace}_`).catch(() => '');
    if (ids !== '') await docker('rm', '-f', '-v', ...ids.split('\n')).catch(() => '');
    const volumes = await docker('volume', 'ls', '-q', '--filter', `label=svc.namespace=${namespace}`).catch(() => '');
    if (volumes !== '') await docker('volume', 'rm', '-f', ...volumes.split('\n')).catch(() => '');
    await docker('network', 'rm', `svc_${namespace}`).catch(() => '');
  }
}
