import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyTimeoutMs, containedIn, findExisting, planDeployment, sameValue, settled } from '../../src/cli/apply-plan.js';
import type { DeploymentBody } from '../../src/cli/manifest.js';

const body: DeploymentBody = {
  name: 'web',
  namespace: 'prod',
  runtime: 'docker',
  kind: 'worker',
  replicas: 1,
  image: 'nginx:1',
  labels: { app: 'web' },
  environment: { A: '1' },
  volumes: [{ type: 'volume', source: 'data', destination: '/data', driver: 'local', permission: 'rw' }],
  ports: [],
};

const live = {
  id: 'd1',
  name: 'web',
  namespace: 'prod',
  status: 'running',
  created_at: '2026-01-01T00:00:00Z',
  runtime: 'docker',
  kind: 'worker',
  replicas: 1,
  image: 'nginx:1',
  labels: { app: 'web' },
  environment: { A: '1' },
  volumes: [{ type: 'volume', source: 'data', destination: '/data', driver: 'local', permission: 'rw', key: null }],
  ports: null,
  command: null,
  instances: [{ id: 'i1' }],
};

test('no existing deployment: create', () => {
  assert.deepEqual(planDeployment(body, undefined), { action: 'create' });
});

test('same content (server-filled extras ignored): unchanged', () => {
  assert.deepEqual(planDeployment(body, live), { action: 'unchanged', existingId: 'd1' });
});

test('changed image, replicas and labels: update listing each change', () => {
  const plan = planDeployment({ ...body, image: 'nginx:2', replicas: 2, labels: {} }, live);
  assert.equal(plan.action, 'update');
  assert.ok(plan.action === 'update');
  assert.deepEqual(plan.changes, ['image: nginx:1 -> nginx:2', 'replicas: 1 -> 2', 'labels changed']);
});

test('a removed environment variable or a new port is a change', () => {
  assert.equal(planDeployment({ ...body, environment: {} }, live).action, 'update');
  assert.equal(planDeployment({ ...body, ports: [{ published: 8080, target: 80 }] }, live).action, 'update');
});

test('findExisting ignores deleted ones and other namespaces, prefers the newest', () => {
  const list = [
    { ...live, id: 'old', created_at: '2026-01-01T00:00:00Z' },
    { ...live, id: 'new', created_at: '2026-01-02T00:00:00Z' },
    { ...live, id: 'gone', created_at: '2026-01-03T00:00:00Z', status: 'deleted' },
    { ...live, id: 'elsewhere', namespace: 'dev', created_at: '2026-01-04T00:00:00Z' },
  ];
  assert.equal(findExisting(list, 'prod', 'web')?.id, 'new');
  assert.equal(findExisting(list, 'prod', 'api'), undefined);
});

test('sameValue / containedIn treat empty forms alike', () => {
  assert.ok(sameValue(undefined, []));
  assert.ok(sameValue({}, null));
  assert.ok(sameValue({ a: 1, b: 2 }, { b: 2, a: 1 }));
  assert.ok(!sameValue({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(containedIn({ a: 1 }, { a: 1, b: 2 }));
  assert.ok(!containedIn([], [1]));
});

test('settled: running (worker) and completed are success; a running job still waits; failures fail; retried states wait', () => {
  assert.equal(settled('running'), 'ok');
  assert.equal(settled('running', 'worker'), 'ok');
  assert.equal(settled('running', 'job'), 'pending');
  assert.equal(settled('completed', 'job'), 'ok');
  assert.equal(settled('failed', 'job'), 'failed');
  assert.equal(settled('completed'), 'ok');
  for (const s of ['failed', 'crash_loop_back_off', 'insufficient_resources', 'deleted']) assert.equal(settled(s), 'failed');
  for (const s of ['pending', 'creating', 'image_pull_back_off', 'error']) assert.equal(settled(s), 'pending');
});

test('SVC_APPLY_TIMEOUT', () => {
  assert.equal(applyTimeoutMs({}), 300_000);
  assert.equal(applyTimeoutMs({ SVC_APPLY_TIMEOUT: '5' }), 5000);
  assert.equal(applyTimeoutMs({ SVC_APPLY_TIMEOUT: 'soon' }), 300_000);
});
