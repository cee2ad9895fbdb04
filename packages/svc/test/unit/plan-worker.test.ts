import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NOW,
  SimulatedWorld,
  TCP_CHECK,
  creates,
  deployment,
  healthy,
  instance,
  lastState,
  reasons,
  removals,
  run,
  states,
  webhooks,
} from './plan-fixtures.js';
import { restartDelayMs } from '../../src/scheduler/backoff.js';
import type { DeploymentStatus } from '../../src/domain/deployment.js';

test('pending worker: creates every replica, emits scaled up per instance, moves to creating', () => {
  const d = deployment({ status: 'pending' }, { replicas: 3 });
  const actions = run({ deployments: [d] });
  assert.equal(creates(actions, 'd1'), 3);
  assert.deepEqual(
    webhooks(actions, 'deployment.scaled').map((e) => [e.direction, e.instance_count, e.replicas]),
    [
      ['up', 1, 3],
      ['up', 2, 3],
      ['up', 3, 3],
    ],
  );
  assert.equal(lastState(actions, 'd1')?.status, 'creating');
  assert.equal(lastState(actions, 'd1')?.statusSince, NOW);
  const [changed] = webhooks(actions, 'deployment.status_changed');
  assert.deepEqual(changed, {
    schema_version: 1,
    deployment_id: 'd1',
    namespace: 'prod',
    name: 'web',
    kind: 'worker',
    old_status: 'pending',
    new_status: 'creating',
    restart_count: 0,
  });
  assert.deepEqual(reasons(actions).filter((r) => r === 'ScaleUp').length, 3);
});

test('idempotent: creations in flight are not repeated, and a second run changes nothing', () => {
  const d = deployment({ status: 'creating', statusSince: NOW }, { replicas: 3 });
  const inFlight = { creations: [{ deploymentId: 'd1' }, { deploymentId: 'd1' }, { deploymentId: 'd1' }], removals: [] };
  assert.deepEqual(run({ deployments: [d], inFlight }), []);
  const partly = { creations: [{ deploymentId: 'd1' }], removals: [] };
  const one = instance(d, { state: 'created' });
  assert.equal(creates(run({ deployments: [d], observed: [one], inFlight: partly })), 1);
});

test('operator flow: pending → creating → running, then a fixed point', () => {
  const world = new SimulatedWorld([deployment({ status: 'pending' }, { replicas: 2 })]);
  world.step();
  assert.equal(world.get('d1').status, 'creating');
  const second = world.step();
  assert.equal(world.get('d1').status, 'running');
  assert.deepEqual(reasons(second), ['Ready']);
  assert.deepEqual(world.step(), []);
  assert.equal(world.instancesOf('d1').length, 2);
});

test('zero replicas: pending goes straight to running with nothing created', () => {
  const actions = run({ deployments: [deployment({ status: 'pending' }, { replicas: 0 })] });
  assert.equal(creates(actions), 0);
  assert.deepEqual(states(actions).map((s) => s.status), ['running']);
});

test('readiness gate: stays creating until every instance passes every check', () => {
  const d = deployment({ status: 'creating' }, { replicas: 2, health_checks: [TCP_CHECK] });
  const a = instance(d);
  const b = instance(d);
  const failing = { instanceId: b.id, checks: [{ lastStatus: 'failure' as const, consecutiveFailures: 1, everSucceeded: false, handled: false, lastMessage: 'refused' }] };
  assert.deepEqual(run({ deployments: [d], observed: [a, b], health: [...healthy(a), failing] }), []);
  assert.deepEqual(run({ deployments: [d], observed: [a, b], health: healthy(a) }), [], 'no result yet is not ready');
  const actions = run({ deployments: [d], observed: [a, b], health: healthy(a, b) });
  assert.equal(lastState(actions, 'd1')?.status, 'running');
});

test('readiness deadline: creating past SVC_APPLY_TIMEOUT → failed, live instances stopped', () => {
  const d = deployment({ status: 'creating', statusSince: NOW - 300_001 }, { replicas: 1, health_checks: [TCP_CHECK] });
  const a = instance(d);
  const actions = run({ deployments: [d], observed: [a] });
  assert.equal(lastState(actions, 'd1')?.status, 'failed');
  assert.deepEqual(removals(actions), [[a.id, 'terminal']]);
  assert.ok(reasons(actions).includes('ReadinessDeadlineExceeded'));
  const custom = run({ deployments: [{ ...d, statusSince: NOW - 5_001 }], observed: [a], applyTimeoutMs: 5_000 });
  assert.equal(lastState(custom, 'd1')?.status, 'failed');
  assert.deepEqual(run({ deployments: [{ ...d, statusSince: NOW - 300_000 }], observed: [a] }), [], 'exactly at the deadline is still in time');
});

test('unplanned exit: counts a restart, removes the exited instance, backs off, then recreates', () => {
  const d = deployment({ status: 'running' }, { replicas: 2 });
  const ok = instance(d);
  const crashed = instance(d, { state: 'exited', exitCode: 1, finishedAt: new Date(NOW).toISOString() });
  const actions = run({ deployments: [d], observed: [ok, crashed] });
  assert.deepEqual(removals(actions), [[crashed.id, 'exited']]);
  assert.equal(creates(actions), 0, 'the replacement waits for the restart backoff');
  const state = lastState(actions, 'd1');
  assert.equal(state?.restartCount, 1);
  assert.equal(state?.status, 'running');
  assert.equal(state?.backoffUntil, NOW + restartDelayMs(1));
  assert.ok(reasons(actions).includes('Exited'));
  assert.deepEqual(webhooks(actions, 'deployment.status_changed'), []);
  const later = run({ deployments: [{ ...d, ...state }], observed: [ok], now: NOW + restartDelayMs(1) });
  assert.equal(creates(later), 1);
  assert.deepEqual(webhooks(later, 'deployment.scaled'), [
    { schema_version: 1, deployment_id: 'd1', namespace: 'prod', name: 'web', kind: 'worker', direction: 'up', instance_count: 2, replicas: 2 },
  ]);
});

test('the 5th unplanned exit gives crash_loop_back_off; the exited instance is kept for its logs', () => {
  const d = deployment({ status: 'running', restartCount: 4 }, { replicas: 2 });
  const ok = instance(d);
  const crashed = instance(d, { state: 'exited', exitCode: 137 });
  const actions = run({ deployments: [d], observed: [ok, crashed] });
  const state = lastState(actions, 'd1');
  assert.equal(state?.status, 'crash_loop_back_off');
  assert.equal(state?.restartCount, 5);
  assert.deepEqual(removals(actions), [[ok.id, 'terminal']]);
  assert.equal(creates(actions), 0);
  const [changed] = webhooks(actions, 'deployment.status_changed');
  assert.equal(changed?.restart_count, 5);
  assert.equal(changed?.new_status, 'crash_loop_back_off');
});

test('two exits in one tick count twice: from 3, the second one is the 5th', () => {
  const d = deployment({ status: 'running', restartCount: 3 }, { replicas: 2 });
  const a = instance(d, { state: 'exited', exitCode: 1, finishedAt: '2026-01-01T00:00:01Z' });
  const b = instance(d, { state: 'dead', exitCode: null, finishedAt: '2026-01-01T00:00:02Z' });
  const actions = run({ deployments: [d], observed: [a, b] });
  assert.equal(lastState(actions, 'd1')?.status, 'crash_loop_back_off');
  assert.deepEqual(removals(actions), [[a.id, 'exited']], 'the 4th exit is cleaned, the 5th kept');
});

test('removals the scheduler makes itself never count: an exited instance being removed is ignored', () => {
  const d = deployment({ status: 'running' }, { replicas: 1 });
  const leaving = instance(d, { state: 'exited', exitCode: 143 });
  const actions = run({ deployments: [d], observed: [leaving], inFlight: { creations: [{ deploymentId: 'd1' }], removals: [leaving.id] } });
  assert.deepEqual(actions, []);
});

test('a container removed behind our back is recreated without counting a restart', () => {
  const d = deployment({ status: 'running' }, { replicas: 2 });
  const actions = run({ deployments: [d], observed: [instance(d)] });
  assert.equal(creates(actions), 1);
  assert.equal(states(actions).length, 0, 'status and restart_count unchanged');
  assert.deepEqual(reasons(actions), ['ScaleUp']);
});

test('scale down removes unready instances first, then the newest, emitting scaled down', () => {
  const d = deployment({ status: 'running' }, { replicas: 1, health_checks: [TCP_CHECK] });
  const oldest = instance(d, { startedAt: '2026-01-01T00:00:00Z' });
  const newest = instance(d, { startedAt: '2026-01-03T00:00:00Z' });
  const unready = instance(d, { startedAt: '2026-01-02T00:00:00Z' });
  const actions = run({ deployments: [d], observed: [oldest, newest, unready], health: healthy(oldest, newest) });
  assert.deepEqual(removals(actions), [
    [unready.id, 'scale_down'],
    [newest.id, 'scale_down'],
  ]);
  assert.deepEqual(
    webhooks(actions, 'deployment.scaled').map((e) => [e.direction, e.instance_count]),
    [
      ['down', 2],
      ['down', 1],
    ],
  );
});

test('drift: an instance with another spec hash is replaced', () => {
  const d = deployment({ status: 'running' }, { replicas: 1 });
  const drifted = instance(d, { specHash: 'old' });
  const actions = run({ deployments: [d], observed: [drifted] });
  assert.deepEqual(removals(actions), [[drifted.id, 'drift']]);
  assert.equal(creates(actions), 1);
  assert.ok(reasons(actions).includes('SpecDrift'));
});

test('orphans: instances of an unknown deployment are removed', () => {
  const d = deployment({ status: 'running' });
  const mine = instance(d);
  const orphan = instance(deployment({ id: 'gone' }));
  assert.deepEqual(removals(run({ deployments: [d], observed: [mine, orphan] })), [[orphan.id, 'orphan']]);
  assert.deepEqual(run({ deployments: [d], observed: [mine, orphan], inFlight: { creations: [], removals: [orphan.id] } }), []);
});

test('deleted: removes every instance (exited too), purges only when nothing is left or in flight', () => {
  const d = deployment({ status: 'deleted' }, { replicas: 2 });
  const a = instance(d);
  const b = instance(d, { state: 'exited', exitCode: 0 });
  const first = run({ deployments: [d], observed: [a, b] });
  assert.deepEqual(removals(first), [
    [a.id, 'deleted'],
    [b.id, 'deleted'],
  ]);
  assert.equal(first.some((x) => x.type === 'purge'), false);
  assert.deepEqual(run({ deployments: [d], observed: [a, b], inFlight: { creations: [], removals: [a.id, b.id] } }), []);
  assert.deepEqual(run({ deployments: [d], inFlight: { creations: [{ deploymentId: 'd1' }], removals: [] } }), []);
  assert.deepEqual(run({ deployments: [d] }), [{ type: 'purge', deploymentId: 'd1' }]);
});

test('actions come ordered: store writes, then removals, then creations', () => {
  const d = deployment({ status: 'running' }, { replicas: 1 });
  const actions = run({ deployments: [d], observed: [instance(d, { specHash: 'old' })] });
  const phases = actions.map((a) => (a.type === 'remove' ? 1 : a.type === 'create' ? 2 : a.type === 'purge' ? 3 : 0));
  assert.deepEqual(phases, [...phases].sort());
});

const terminal: DeploymentStatus[] = ['completed', 'failed', 'crash_loop_back_off', 'insufficient_resources'];
for (const status of terminal) {
  test(`terminal ${status}: nothing is created; still-running instances are stopped, exited ones kept`, () => {
    const d = deployment({ status }, { replicas: 2 });
    const running = instance(d);
    const exited = instance(d, { state: 'exited', exitCode: 1 });
    const actions = run({ deployments: [d], observed: [running, exited] });
    assert.equal(creates(actions), 0);
    assert.deepEqual(removals(actions), [[running.id, 'terminal']]);
    assert.equal(states(actions).length, 0);
    assert.deepEqual(run({ deployments: [d], observed: [exited] }), []);
  });
}

const retried: DeploymentStatus[] = ['image_pull_back_off', 'create_container_error', 'network_error', 'config_error', 'file_system_error', 'error'];
for (const status of retried) {
  test(`retried ${status}: waits out the backoff, then retries and moves to creating`, () => {
    const d = deployment({ status, retryCount: 2, backoffUntil: NOW + 5000 }, { replicas: 1 });
    assert.deepEqual(run({ deployments: [d] }), []);
    const actions = run({ deployments: [d], now: NOW + 5000 });
    assert.equal(creates(actions), 1);
    const state = lastState(actions, 'd1');
    assert.equal(state?.status, 'creating');
    assert.equal(state?.retryCount, 2, 'kept until running');
    assert.ok(reasons(actions).includes('Retrying'));
    assert.deepEqual(webhooks(actions, 'deployment.status_changed').map((e) => [e.old_status, e.new_status]), [[status, 'creating']]);
  });
}

test('reaching running resets the retry counter and the backoff', () => {
  const d = deployment({ status: 'creating', retryCount: 3, backoffUntil: NOW - 1 }, { replicas: 1 });
  const state = lastState(run({ deployments: [d], observed: [instance(d)] }), 'd1');
  assert.deepEqual(state, { status: 'running', restartCount: 0, retryCount: 0, statusSince: NOW, backoffUntil: null });
});

test('a retried status whose instances are all up again goes straight to running', () => {
  const d = deployment({ status: 'error', backoffUntil: NOW + 60_000 }, { replicas: 1 });
  assert.equal(lastState(run({ deployments: [d], observed: [instance(d)] }), 'd1')?.status, 'running');
});

test('instances in state removing are treated as gone', () => {
  const d = deployment({ status: 'running' }, { replicas: 1 });
  assert.equal(creates(run({ deployments: [d], observed: [instance(d, { state: 'removing' })] })), 1);
});
