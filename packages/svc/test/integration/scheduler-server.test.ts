// The scheduler inside the REAL server process (test/support/server.ts), against real dockerd. Deployments are
// written straight into the server's SQLite file (WAL: a second writer is fine); the server's tick picks them up.
// - kill -9 while 3 replicas are coming up, then a restart: exactly 3 containers;
// - /metrics carries the per-deployment series, refreshed in the background;
// - SVC_SCHEDULER=off: nothing is reconciled.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, type Db } from '../../src/store/db.js';
import { applyDeployment, getDeployment, markDeleted } from '../../src/store/deployments.js';
import { ensureBusyboxImage } from '../support/busybox-image.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { cleanupNamespaces, docker, fileNamespace, testSpec } from './scheduler-support.js';

const namespaces: string[] = [];
const servers: TestServer[] = [];

const ns = (): string => fileNamespace(namespaces);

async function server(env: Record<string, string> = {}): Promise<TestServer> {
  const started = await startTestServer({ env: { SVC_SCHEDULER_INTERVAL: '1', ...env } });
  servers.push(started);
  return started;
}

async function containers(deploymentId: string): Promise<string[]> {
  const out = await docker('ps', '-a', '-q', '--filter', `label=svc_deployment=${deploymentId}`);
  return out === '' ? [] : out.split('\n');
}

async function waitStatus(db: Db, id: string, status: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (getDeployment(db, id)?.status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`deployment ${id} is '${getDeployment(db, id)?.status}', not '${status}', after ${timeoutMs} ms`);
}

before(async () => {
  await ensureBusyboxImage();
});

after(async () => {
  for (const s of servers) await s.close();
  await cleanupNamespaces(namespaces);
});

test('kill -9 of the server while 3 replicas come up, then a restart: exactly 3 containers, running', async () => {
  const s = await server();
  const db = openDatabase(s.dbPath);
  try {
    const namespace = ns();
    const d = applyDeployment(db, testSpec(namespace, { name: 'three', replicas: 3 }), false);
    // Kill as soon as the first container exists: the others are being created or not started yet.
    const deadline = Date.now() + 30_000;
    while ((await containers(d.id)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    await s.kill();
    const atKill = (await containers(d.id)).length;
    assert.ok(atKill >= 1 && atKill <= 3, `containers at kill: ${atKill}`);

    await s.restart();
    await waitStatus(db, d.id, 'running');
    // Several passes later, still exactly 3, all running.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const all = await containers(d.id);
    assert.equal(all.length, 3, `exactly 3 containers (had ${atKill} at the kill)`);
    const states = await docker('inspect', '--format', '{{.State.Status}}', ...all);
    assert.deepEqual(states.split('\n'), ['running', 'running', 'running']);
    assert.equal(getDeployment(db, d.id)?.restart_count, 0);

    markDeleted(db, d.id);
    const gone = Date.now() + 30_000;
    while (getDeployment(db, d.id) !== null && Date.now() < gone) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(getDeployment(db, d.id), null, 'purged after its instances were removed');
    assert.deepEqual(await containers(d.id), []);
  } finally {
    db.close();
  }
});

test('/metrics: per-deployment series and svc_runtime_last_refresh_seconds, refreshed in the background', async () => {
  const s = await server();
  const db = openDatabase(s.dbPath);
  try {
    const namespace = ns();
    const d = applyDeployment(db, testSpec(namespace, { name: 'metered', replicas: 2, resources: { limits: { memory: '64Mi' }, requests: {} } }), false);
    await waitStatus(db, d.id, 'running');
    const labels = `deployment="metered",namespace="${namespace}",runtime="docker"`;
    let text = '';
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      text = (await s.request('GET', '/metrics', { token: null })).text;
      // Both instances refreshed (a refresh may have run while only the first one was up).
      if (new RegExp(`svc_deployment_memory_limit_bytes\\{${labels}\\} ${2 * 64 * 1024 * 1024}\\n`).test(text)) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.match(text, new RegExp(`svc_deployment_instances\\{${labels}\\} 2\\n`));
    assert.match(text, new RegExp(`svc_deployment_memory_limit_bytes\\{${labels}\\} ${2 * 64 * 1024 * 1024}\\n`));
    assert.match(text, new RegExp(`svc_deployment_memory_usage_bytes\\{${labels}\\} [1-9]\\d*\\n`));
    assert.match(text, new RegExp(`svc_deployment_pids\\{${labels}\\} [1-9]\\d*\\n`));
    assert.match(text, /# TYPE svc_deployment_network_rx_bytes_total counter/);
    assert.match(text, new RegExp(`svc_deployment_restarts_total\\{${labels}\\} 0\\n`));
    for (const name of ['cpu_usage_percent', 'network_tx_bytes_total', 'disk_read_bytes_total', 'disk_write_bytes_total']) {
      assert.match(text, new RegExp(`svc_deployment_${name}\\{${labels}\\} `));
    }
    const refreshed = /svc_runtime_last_refresh_seconds\{runtime="docker"\} (\d+)/.exec(text);
    assert.ok(refreshed, 'svc_runtime_last_refresh_seconds present');
    assert.ok(Math.abs(Number(refreshed[1]) - Date.now() / 1000) < 30);
  } finally {
    db.close();
  }
});

test('SVC_SCHEDULER=off: the API runs alone and nothing is reconciled', async () => {
  const s = await server({ SVC_SCHEDULER: 'off' });
  const db = openDatabase(s.dbPath);
  try {
    const d = applyDeployment(db, testSpec(ns(), { name: 'idle' }), false);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    assert.equal(getDeployment(db, d.id)?.status, 'pending');
    assert.deepEqual(await containers(d.id), []);
    assert.doesNotMatch((await s.request('GET', '/metrics', { token: null })).text, /svc_runtime_last_refresh_seconds/);
  } finally {
    db.close();
  }
});

test('SVC_APPLY_TIMEOUT that is not a positive integer refuses to start, naming the variable', async () => {
  const s = await startTestServer({ env: { SVC_APPLY_TIMEOUT: 'soon' }, expectFailure: true });
  servers.push(s);
  assert.equal(await s.exited(), 1);
  assert.match(s.stderr(), /SVC_APPLY_TIMEOUT/);
});
