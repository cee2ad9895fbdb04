// GET /metrics against the real server: unauthenticated, Prometheus text by default, JSON on request, every
// status always present, and counts that follow the database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { DEPLOYMENT_STATUSES } from '../../src/domain/deployment.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('Prometheus text 0.0.4 by default, no token needed, every status emitted', async () => {
  const response = await server.request('GET', '/metrics', { token: null });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  const text = response.text;
  for (const status of DEPLOYMENT_STATUSES) assert.equal(sample(text, `svc_deployments_by_status{status="${status}"}`), 0, status);
  for (const runtime of ['docker', 'cloud-hypervisor']) assert.equal(sample(text, `svc_deployments_by_runtime{runtime="${runtime}"}`), 0);
  for (const status of ['pending', 'delivered', 'dead']) assert.equal(sample(text, `svc_events_by_status{status="${status}"}`), 0);
  for (const status of ['success', 'failure', 'timeout']) assert.equal(sample(text, `svc_health_checks_by_status{status="${status}"}`), 0);
  assert.equal(sample(text, 'svc_users'), 1);
  assert.match(text, /^# TYPE svc_deployments gauge$/m);
  for (const name of ['svc_deployments', 'svc_namespaces', 'svc_secrets', 'svc_volumes', 'svc_webhooks', 'svc_configs']) assert.equal(sample(text, name), 0, name);
});

test('counts follow the database, in text and JSON alike', async () => {
  await server.request('POST', '/users', { body: { username: 'metric-user', password: 'metric-password' } });
  await server.request('POST', '/namespaces', { body: { name: 'metrics-ns' } });
  await server.request('POST', '/secrets', { body: { namespace: 'metrics-ns', name: 'one', value: 'x' } });
  const db = new Database(server.dbPath);
  const now = new Date().toISOString();
  const insert = db.prepare("INSERT INTO deployments (id, namespace, name, kind, runtime, status, spec, created_at, updated_at) VALUES (?, 'metrics-ns', ?, 'worker', ?, ?, '{}', ?, ?)");
  insert.run(randomUUID(), 'a', 'docker', 'running', now, now);
  insert.run(randomUUID(), 'b', 'docker', 'running', now, now);
  insert.run(randomUUID(), 'c', 'cloud-hypervisor', 'failed', now, now);
  db.close();

  const text = (await server.request('GET', '/metrics', { token: null })).text;
  assert.equal(sample(text, 'svc_users'), 2);
  assert.equal(sample(text, 'svc_namespaces'), 1);
  assert.equal(sample(text, 'svc_secrets'), 1);
  assert.equal(sample(text, 'svc_deployments'), 3);
  assert.equal(sample(text, 'svc_deployments_by_status{status="running"}'), 2);
  assert.equal(sample(text, 'svc_deployments_by_status{status="failed"}'), 1);
  assert.equal(sample(text, 'svc_deployments_by_runtime{runtime="cloud-hypervisor"}'), 1);

  const json = await server.request<Record<string, unknown>>('GET', '/metrics', { token: null, headers: { accept: 'application/json' } });
  assert.equal(json.status, 200);
  assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(json.body.svc_users, 2);
  assert.equal(json.body.svc_deployments, 3);
  const byStatus = json.body.svc_deployments_by_status as Record<string, number>;
  assert.deepEqual(Object.keys(byStatus), [...DEPLOYMENT_STATUSES]);
  assert.equal(byStatus.running, 2);
  assert.equal(byStatus.pending, 0);
  assert.deepEqual(json.body.svc_events_by_status, { pending: 0, delivered: 0, dead: 0 });
  // A browser-ish Accept that prefers text keeps the text format.
  const prefersText = await server.request('GET', '/metrics', { token: null, headers: { accept: 'text/plain, application/json' } });
  assert.match(prefersText.headers.get('content-type') ?? '', /^text\/plain/);
});
