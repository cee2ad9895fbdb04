import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NOW, TCP_CHECK, deployment, lastState, reasons, spec, webhooks } from './plan-fixtures.js';
import { initialSchedulerState, nextWakeAt, planCreateFailure } from '../../src/scheduler/plan.js';
import { RETRY_CAP_MS, restartDelayMs, retryDelayMs } from '../../src/scheduler/backoff.js';
import { deploymentSpecHash } from '../../src/scheduler/spec-hash.js';
import { selectPrunable } from '../../src/scheduler/prune.js';
import { DEPLOYMENT_STATUSES, RETRIED_STATUSES, TERMINAL_STATUSES, type DeploymentStatus } from '../../src/domain/deployment.js';
import type { FailureStatus } from '../../src/runtime/runtime.js';

const retriedFailures: [FailureStatus, string][] = [
  ['image_pull_back_off', 'ImagePullBackOff'],
  ['create_container_error', 'CreateContainerError'],
  ['network_error', 'NetworkError'],
  ['config_error', 'ConfigError'],
  ['file_system_error', 'FileSystemError'],
  ['error', 'RuntimeError'],
];

for (const [status, reason] of retriedFailures) {
  test(`create failure ${status}: status, deployment.error, exponential backoff`, () => {
    const d = deployment({ status: 'creating', retryCount: 1 });
    const actions = planCreateFailure(d, { status, category: 'user', message: 'boom' }, NOW);
    assert.deepEqual(lastState(actions, 'd1'), {
      status,
      restartCount: 0,
      retryCount: 2,
      statusSince: NOW,
      backoffUntil: NOW + retryDelayMs(2),
    });
    assert.deepEqual(webhooks(actions, 'deployment.error'), [
      { schema_version: 1, deployment_id: 'd1', namespace: 'prod', name: 'web', kind: 'worker', reason: status, category: 'user', message: 'boom' },
    ]);
    assert.deepEqual(webhooks(actions, 'deployment.status_changed').map((e) => [e.old_status, e.new_status]), [['creating', status]]);
    assert.deepEqual(reasons(actions).slice(0, 1), [reason]);
    assert.ok(reasons(actions).includes('BackOff'));
  });
}

test('a repeated failure of the same status keeps the status (no status_changed) and doubles the wait', () => {
  const d = deployment({ status: 'image_pull_back_off', retryCount: 3, statusSince: NOW - 10 });
  const actions = planCreateFailure(d, { status: 'image_pull_back_off', category: 'user', message: 'x' }, NOW);
  assert.deepEqual(webhooks(actions, 'deployment.status_changed'), []);
  assert.equal(lastState(actions, 'd1')?.backoffUntil, NOW + 80_000);
});

for (const status of ['insufficient_resources', 'failed'] as const) {
  test(`create failure ${status} is terminal: no backoff`, () => {
    const actions = planCreateFailure(deployment({ status: 'creating' }), { status, category: 'host', message: 'x' }, NOW);
    assert.equal(lastState(actions, 'd1')?.status, status);
    assert.equal(lastState(actions, 'd1')?.backoffUntil, null);
    assert.deepEqual(webhooks(actions, 'deployment.rolling_update'), [], 'no parent, no rolling-update verdict');
  });
}

test('a missing secret: failed with the SecretNotFound reason', () => {
  const actions = planCreateFailure(
    deployment({ status: 'pending' }),
    { status: 'failed', category: 'user', message: "secret 'db' not found", reason: 'SecretNotFound' },
    NOW,
  );
  assert.equal(lastState(actions, 'd1')?.status, 'failed');
  assert.equal(reasons(actions)[0], 'SecretNotFound');
});

test('a failure reported after deletion changes nothing but is still reported', () => {
  for (const status of ['deleted', 'completed'] as DeploymentStatus[]) {
    const actions = planCreateFailure(deployment({ status }), { status: 'error', category: 'transient', message: 'x' }, NOW);
    assert.equal(lastState(actions, 'd1'), undefined);
    assert.equal(webhooks(actions, 'deployment.error').length, 1);
  }
});

test('backoff timings', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 50].map(retryDelayMs), [10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, RETRY_CAP_MS]);
  assert.deepEqual([1, 2, 3, 4].map(restartDelayMs), [1000, 2000, 4000, 8000]);
  assert.equal(retryDelayMs(0), 10_000);
});

test('nextWakeAt: earliest future backoff end or readiness deadline', () => {
  const applying = deployment({ id: 'a', status: 'creating', statusSince: NOW });
  const waiting = deployment({ id: 'b', status: 'error', backoffUntil: NOW + 20_000 });
  const past = deployment({ id: 'c', status: 'error', backoffUntil: NOW - 1 });
  assert.equal(nextWakeAt([applying, waiting, past], NOW), NOW + 20_000);
  assert.equal(nextWakeAt([applying], NOW, 5_000), NOW + 5_001);
  assert.equal(nextWakeAt([past, deployment({ status: 'running' })], NOW), null);
});

test('initial scheduler state', () => {
  assert.deepEqual(initialSchedulerState(NOW), { status: 'pending', restartCount: 0, retryCount: 0, statusSince: NOW, backoffUntil: null });
});

test('status sets: terminal and retried partition the failure statuses as the spec says', () => {
  assert.deepEqual([...TERMINAL_STATUSES].sort(), ['completed', 'crash_loop_back_off', 'failed', 'insufficient_resources']);
  assert.deepEqual([...RETRIED_STATUSES].sort(), ['config_error', 'create_container_error', 'error', 'file_system_error', 'image_pull_back_off', 'network_error']);
  assert.equal(DEPLOYMENT_STATUSES.length, 14);
});

test('spec hash: stable across key order, changes with the spec, ignores registry credentials', () => {
  const a = spec({ health_checks: [TCP_CHECK], labels: { a: '1', b: '2' } });
  const reordered = { ...a, labels: { b: '2', a: '1' } };
  assert.equal(deploymentSpecHash(a), deploymentSpecHash(reordered));
  assert.match(deploymentSpecHash(a), /^[0-9a-f]{64}$/);
  assert.notEqual(deploymentSpecHash(a), deploymentSpecHash({ ...a, image: 'other' }));
  const withAuth = { ...a, config: { ...a.config, registry_auth: { username: 'u', password: 'secret' } } };
  assert.equal(deploymentSpecHash(withAuth), deploymentSpecHash(a));
});

test('namespace prune: by default keeps pending, creating, running; --all takes everything; other namespaces untouched', () => {
  const all = DEPLOYMENT_STATUSES.map((status, index) => ({ id: `d${index}`, namespace: 'ns', status }));
  const other = { id: 'x', namespace: 'other', status: 'failed' as const };
  const pruned = selectPrunable([...all, other], 'ns', false).map((d) => d.status);
  assert.deepEqual(pruned.sort(), [
    'completed',
    'config_error',
    'crash_loop_back_off',
    'create_container_error',
    'deleted',
    'error',
    'failed',
    'file_system_error',
    'image_pull_back_off',
    'network_error',
  ].sort(), 'insufficient_resources is not in the spec list, so it is kept like pending/creating/running');
  assert.equal(selectPrunable([...all, other], 'ns', true).length, 14);
  assert.deepEqual(selectPrunable([other], 'ns', true), []);
});
