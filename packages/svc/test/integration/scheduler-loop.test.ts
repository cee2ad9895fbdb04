// The loop's own guarantees, with the real plan, executor and SQLite store but an in-memory runtime
// (test/support/fake-runtime.ts) so timing can be controlled: one list per pass, nothing created twice while
// creations are slow, a bounded number of creations at once, a slow creation never delays other deployments,
// a failed list changes nothing, adoption, orphans left alone, interrupted creations cleaned up, metrics.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { renderPrometheus } from '../../src/metrics/exposition.js';
import { createMetricsRegistry, type MetricsRegistry } from '../../src/metrics/registry.js';
import { RuntimeError } from '../../src/runtime/runtime.js';
import { createScheduler, type Scheduler } from '../../src/scheduler/loop.js';
import { deploymentSpecHash } from '../../src/scheduler/spec-hash.js';
import { migrate, openDatabase, type Db } from '../../src/store/db.js';
import { applyDeployment, getDeployment, type DeploymentRecord } from '../../src/store/deployments.js';
import { FakeRuntime, type FakeRuntimeOptions } from '../support/fake-runtime.js';
import { testSpec } from './scheduler-support.js';

interface Rig {
  db: Db;
  runtime: FakeRuntime;
  scheduler: Scheduler;
  metrics: MetricsRegistry;
  deploy(name: string, overrides?: Parameters<typeof testSpec>[1]): DeploymentRecord;
  status(id: string): string | undefined;
}

async function withRig(options: FakeRuntimeOptions & { start?: boolean; seed?: (rig: Rig) => void }, run: (rig: Rig) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-d2t-loop-'));
  const db = openDatabase(join(dir, 'svc.db'));
  migrate(db);
  const runtime = new FakeRuntime(options);
  const metrics = createMetricsRegistry();
  const scheduler = createScheduler({
    db,
    secretBox: createSecretBox(randomBytes(32)),
    runtimes: [runtime],
    intervalMs: 60_000,
    dataDir: join(dir, 'svc-data'),
    metrics,
  });
  const rig: Rig = {
    db,
    runtime,
    scheduler,
    metrics,
    deploy: (name, overrides = {}) => applyDeployment(db, testSpec('d2t-loop', { name, ...overrides }), false),
    status: (id) => getDeployment(db, id)?.status,
  };
  options.seed?.(rig);
  if (options.start !== false) scheduler.start();
  try {
    await run(rig);
  } finally {
    await scheduler.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('slow creations: many passes in the meantime create nothing twice; one list per pass; the bound holds', async () => {
  await withRig({ createDelayMs: () => 300 }, async (rig) => {
    const ids = Array.from({ length: 10 }, (_, k) => rig.deploy(`w${k}`, { replicas: 2 }).id);
    rig.scheduler.handle.nudge();
    for (let k = 0; k < 15; k += 1) {
      const lists = rig.runtime.calls.list;
      await rig.scheduler.reconcileNow();
      assert.ok(rig.runtime.calls.list - lists <= 2, 'a pass lists once (plus at most one queued pass)');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await until('all running', () => ids.every((id) => rig.status(id) === 'running'));
    await rig.scheduler.reconcileNow();
    assert.equal(rig.runtime.calls.create, 20);
    assert.equal(rig.runtime.instances.size, 20);
    assert.ok(rig.runtime.maxConcurrentCreates <= 16, `at most 16 creations at once (saw ${rig.runtime.maxConcurrentCreates})`);
    assert.ok(rig.runtime.maxConcurrentCreates >= 4, 'creations do run concurrently');
  });
});

test('containers listed as created while their creation runs are neither counted twice nor removed as leftovers', async () => {
  await withRig({ createDelayMs: () => 250, visibleWhileCreating: true, listDelayMs: 120 }, async (rig) => {
    const ids = Array.from({ length: 6 }, (_, k) => rig.deploy(`v${k}`, { replicas: 2 }).id);
    rig.scheduler.handle.nudge();
    for (let k = 0; k < 12; k += 1) {
      await rig.scheduler.reconcileNow();
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await until('all running', () => ids.every((id) => rig.status(id) === 'running'));
    await rig.scheduler.reconcileNow();
    await rig.scheduler.settled();
    assert.equal(rig.runtime.calls.create, 12, 'exactly one creation per replica');
    assert.equal(rig.runtime.calls.remove, 0, 'nothing removed as excess or as a leftover');
    assert.equal(rig.runtime.instances.size, 12);
  });
});

test('a slow image never delays other deployments', async () => {
  await withRig({ createDelayMs: (image) => (image === 'slow:1' ? 4_000 : 0) }, async (rig) => {
    const slow = rig.deploy('slow', { image: 'slow:1' });
    const fast = Array.from({ length: 5 }, (_, k) => rig.deploy(`fast${k}`).id);
    rig.scheduler.handle.nudge();
    const started = Date.now();
    await until('fast ones running', () => fast.every((id) => rig.status(id) === 'running'), 3_000);
    assert.ok(Date.now() - started < 2_000);
    assert.equal(rig.status(slow.id), 'creating');
  });
});

test('a failed list skips the pass: nothing is created, no status moves; the next pass proceeds', async () => {
  await withRig({ start: false }, async (rig) => {
    rig.runtime.listFailure = new Error('daemon down');
    const d = rig.deploy('x');
    rig.scheduler.start();
    await rig.scheduler.reconcileNow();
    await rig.scheduler.settled();
    assert.equal(rig.runtime.calls.create, 0);
    assert.equal(rig.status(d.id), 'pending');
    rig.runtime.listFailure = null;
    await rig.scheduler.reconcileNow();
    await until('running', () => rig.status(d.id) === 'running');
  });
});

test('restart: observed instances are adopted (no creation); orphans are left alone; a created-but-never-started leftover is replaced', async () => {
  let adopted = '';
  let leftover = '';
  let orphan = '';
  await withRig(
    {
      start: false,
      seed: (rig) => {
        const a = rig.deploy('adopted', { replicas: 2 });
        adopted = a.id;
        rig.runtime.seed(a.id, deploymentSpecHash(a.spec));
        rig.runtime.seed(a.id, deploymentSpecHash(a.spec));
        const b = rig.deploy('leftover');
        leftover = rig.runtime.seed(b.id, deploymentSpecHash(b.spec), { state: 'created', startedAt: null }).id;
        orphan = rig.runtime.seed('not-ours', 'h').id;
      },
    },
    async (rig) => {
      rig.scheduler.start();
      await until('adopted running', () => rig.status(adopted) === 'running');
      await until('leftover replaced', () => !rig.runtime.instances.has(leftover) && rig.runtime.calls.create === 1);
      await rig.scheduler.reconcileNow();
      await rig.scheduler.settled();
      assert.equal(rig.runtime.calls.create, 1, 'only the leftover was replaced');
      assert.ok(rig.runtime.instances.has(orphan), 'an instance of an unknown deployment is not ours to remove');
      assert.equal(rig.scheduler.handle.instancesOf(adopted).length, 2);
    },
  );
});

test('create failure: classified status, backoff, deployment.error; one failure report per batch', async () => {
  await withRig({ failure: (image) => (image === 'bad:1' ? new RuntimeError('image_pull_back_off', 'user', 'no such tag') : null) }, async (rig) => {
    const d = rig.deploy('bad', { image: 'bad:1', replicas: 1 });
    rig.scheduler.handle.nudge();
    await until('back off', () => rig.status(d.id) === 'image_pull_back_off');
    await rig.scheduler.settled();
    const errors = rig.db.prepare("SELECT payload FROM events WHERE kind = 'deployment.error' AND deployment_id = ?").all(d.id) as { payload: string }[];
    assert.equal(errors.length, 1);
    assert.deepEqual(
      (({ reason, category, message }) => ({ reason, category, message }))(JSON.parse(errors[0]?.payload ?? '{}') as Record<string, unknown>),
      { reason: 'image_pull_back_off', category: 'user', message: 'no such tag' },
    );
    const record = getDeployment(rig.db, d.id);
    assert.equal(record?.retry_count, 1);
    assert.ok((record?.backoff_until ?? 0) > Date.now() + 5_000, 'first retry 10 s later');
    await rig.scheduler.reconcileNow();
    await rig.scheduler.settled();
    assert.equal(rig.runtime.calls.create, 1, 'no retry before the backoff ends');
  });
});

test('metrics: per-deployment series from the cached stats, no runtime call at scrape time', async () => {
  await withRig({}, async (rig) => {
    const d = rig.deploy('m', { replicas: 2 });
    rig.scheduler.handle.nudge();
    await until('running', () => rig.status(d.id) === 'running');
    const statsCalls = rig.runtime.calls.stats;
    const text = renderPrometheus(rig.metrics.collect());
    assert.equal(rig.runtime.calls.stats, statsCalls, 'a scrape never calls the runtime');
    assert.match(text, /svc_deployment_instances\{deployment="m",namespace="d2t-loop",runtime="docker"\} 2/);
    assert.match(text, /svc_deployment_restarts_total\{deployment="m",namespace="d2t-loop",runtime="docker"\} 0/);
  });
});

test('a pass that throws (the store unreadable) is logged and retried, never an unhandled rejection', async () => {
  await withRig({ start: false }, async (rig) => {
    const d = rig.deploy('x');
    rig.db.exec('ALTER TABLE deployments RENAME TO deployments_away');
    rig.scheduler.start();
    await rig.scheduler.reconcileNow();
    rig.db.exec('ALTER TABLE deployments_away RENAME TO deployments');
    await rig.scheduler.reconcileNow();
    await until('running after the store came back', () => rig.status(d.id) === 'running');
  });
});
