// A deployments row this server cannot read (written by hand or another version) must not stop the server: the
// scheduler skips it (logged once, by id, never the spec text), the API answers a clear 500 problem for it, and
// every other deployment keeps reconciling. Once over the loop with the in-memory runtime, once over a real
// server process with its real SQLite file and dockerd.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { createScheduler } from '../../src/scheduler/loop.js';
import { migrate, openDatabase, type Db } from '../../src/store/db.js';
import { applyDeployment, getDeployment, listDeployments, UnreadableDeploymentError } from '../../src/store/deployments.js';
import { ensureBusyboxImage, BUSYBOX_IMAGE } from '../support/busybox-image.js';
import { FakeRuntime } from '../support/fake-runtime.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { cleanUp, removeDockerObjects } from './deployments-api-support.js';
import { testSpec, WORKER_COMMAND } from './scheduler-support.js';

const SECRET_IN_SPEC = 's5t-do-not-log-this';

interface RawRow {
  id: string;
  spec: string;
  status?: string;
}

/** Inserts a row the way a hand edit would: straight into the table, bypassing createDeployment. */
function insertRaw(db: Pick<Db, 'prepare'>, row: RawRow): void {
  const at = new Date().toISOString();
  db.prepare(
    `INSERT INTO deployments (id, namespace, name, kind, runtime, status, spec, restart_count, parent_id, image_digest,
       created_at, updated_at, retry_count, status_since, backoff_until, force)
     VALUES (?, 's5t-bad', ?, 'worker', 'docker', ?, ?, 0, NULL, NULL, ?, ?, 0, ?, NULL, 0)`,
  ).run(row.id, `bad-${row.id.slice(0, 8)}`, row.status ?? 'pending', row.spec, at, at, Date.now());
}

const BAD_ROWS: readonly RawRow[] = [
  { id: randomUUID(), spec: `{"name": "half", "password": "${SECRET_IN_SPEC}"` },
  { id: randomUUID(), spec: JSON.stringify({ name: 'partial', namespace: 's5t-bad', config: { registry_auth: { password: SECRET_IN_SPEC } } }) },
  { id: randomUUID(), spec: '[]' },
  { id: randomUUID(), spec: JSON.stringify(testSpec('s5t-bad', { name: 'odd-status' })), status: 'sleeping' },
];

test('store: unreadable rows are skipped by listings and named (not shown) by getDeployment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s5t-store-'));
  const db = openDatabase(join(dir, 'svc.db'));
  try {
    migrate(db);
    const good = applyDeployment(db, testSpec('s5t-store', { name: 'good' }), false);
    for (const row of BAD_ROWS) insertRaw(db, row);
    const skipped: string[] = [];
    const listed = listDeployments(db, {}, (error) => skipped.push(error.deploymentId));
    assert.deepEqual(listed.map((d) => d.id), [good.id]);
    assert.deepEqual(skipped.sort(), BAD_ROWS.map((r) => r.id).sort());
    for (const row of BAD_ROWS) {
      assert.throws(
        () => getDeployment(db, row.id),
        (error: unknown) => error instanceof UnreadableDeploymentError && error.deploymentId === row.id && !error.message.includes(SECRET_IN_SPEC),
      );
    }
    assert.equal(getDeployment(db, good.id)?.spec.name, 'good');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('loop: other deployments reconcile past unreadable rows, each logged once by id without its spec', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-s5t-loop-'));
  const db = openDatabase(join(dir, 'svc.db'));
  migrate(db);
  const runtime = new FakeRuntime();
  const logs: string[] = [];
  const remember = (level: string) => (message: string) => void logs.push(`${level}: ${message}`);
  const scheduler = createScheduler({
    db,
    secretBox: createSecretBox(randomBytes(32)),
    runtimes: [runtime],
    intervalMs: 60_000,
    dataDir: join(dir, 'svc-data'),
    log: { info: remember('info'), warn: remember('warn'), error: remember('error') },
  });
  try {
    for (const row of BAD_ROWS) insertRaw(db, row);
    const first = applyDeployment(db, testSpec('s5t-loop', { name: 'first', replicas: 2 }), false);
    // An instance of an unreadable deployment is left alone (like one of an unknown deployment), never removed.
    const foreign = runtime.seed(BAD_ROWS[0]!.id, 'whatever');
    scheduler.start();
    for (let pass = 0; pass < 4; pass += 1) {
      await scheduler.reconcileNow();
      await scheduler.settled();
    }
    assert.equal(getDeployment(db, first.id)?.status, 'running');
    assert.equal([...runtime.instances.values()].filter((i) => i.deploymentId === first.id).length, 2);
    assert.ok(runtime.instances.has(foreign.id), 'the unreadable deployment instance is not removed');

    // A deployment added later still reconciles: the loop did not stop.
    const second = applyDeployment(db, testSpec('s5t-loop', { name: 'second' }), false);
    await scheduler.reconcileNow();
    await scheduler.settled();
    await scheduler.reconcileNow();
    assert.equal(getDeployment(db, second.id)?.status, 'running');

    for (const row of BAD_ROWS) {
      assert.equal(logs.filter((line) => line.includes(row.id) && line.includes('cannot read')).length, 1, `${row.id} logged once:\n${logs.join('\n')}`);
    }
    assert.ok(!logs.some((line) => line.includes(SECRET_IN_SPEC)), 'spec text never logged');
    assert.ok(!logs.some((line) => line.includes('pass failed')), logs.join('\n'));
  } finally {
    await scheduler.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const PREFIX = `s5tbad${process.pid % 100000}`;
let server: TestServer;

before(async () => {
  await ensureBusyboxImage();
  server = await startTestServer({ configToml: '[scheduler]\ninterval = 1\n' });
});

after(async () => {
  if (server !== undefined) await cleanUp(server, PREFIX);
  else await removeDockerObjects(PREFIX);
});

test('server: a malformed row in the real SQLite file is a 500 problem, the server stays up and keeps reconciling', async () => {
  const raw = new Database(server.dbPath);
  try {
    raw.pragma('busy_timeout = 5000');
    for (const row of BAD_ROWS) insertRaw(raw, row);
  } finally {
    raw.close();
  }

  for (const row of BAD_ROWS) {
    const answer = await server.request<{ status: number; detail: string }>('GET', `/deployments/${row.id}`);
    assert.equal(answer.status, 500);
    assert.match(answer.headers.get('content-type') ?? '', /application\/problem\+json/);
    assert.ok(answer.body.detail.includes(row.id), answer.text);
    assert.ok(!answer.text.includes(SECRET_IN_SPEC));
  }
  const list = await server.request<{ id: string }[]>('GET', '/deployments');
  assert.equal(list.status, 200);
  assert.ok(!list.body.some((d) => BAD_ROWS.some((r) => r.id === d.id)));

  const created = await server.request<{ id: string }>('POST', '/deployments', {
    body: { name: 'after-bad', runtime: 'docker', namespace: `${PREFIX}a`, image: BUSYBOX_IMAGE, command: WORKER_COMMAND, config: { image_pull_policy: 'Never' } },
  });
  assert.equal(created.status, 201, created.text);
  const deadline = Date.now() + 60_000;
  let status = '';
  while (Date.now() < deadline && status !== 'running') {
    const current = await server.request<{ status: string }>('GET', `/deployments/${created.body.id}`);
    status = current.body.status;
    if (status !== 'running') await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.equal(status, 'running');

  assert.equal((await server.request('GET', '/healthz', { token: null })).status, 200);
  const exited = await Promise.race([server.exited().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 1_500))]);
  assert.equal(exited, false, 'server still running');
  const output = server.stdout() + server.stderr();
  assert.ok(!output.includes(SECRET_IN_SPEC), 'spec text never in the server log');
  assert.ok(output.includes(BAD_ROWS[0]!.id), 'the unreadable row is named in the log');
});
