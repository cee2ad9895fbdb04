import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NOW,
  SimulatedWorld,
  TCP_CHECK,
  check,
  creates,
  deployment,
  instance,
  lastState,
  reasons,
  removals,
  run,
  webhooks,
} from './plan-fixtures.js';
import type { Action } from '../../src/scheduler/plan.js';
import type { OnFailureAction } from '../../src/domain/deployment.js';

const job = (overrides: Parameters<typeof deployment>[0] = {}) => deployment({ ...overrides }, { kind: 'job', replicas: 1 });

test('job: pending creates its one instance and moves to creating', () => {
  const actions = run({ deployments: [job({ status: 'pending' })] });
  assert.equal(creates(actions), 1);
  assert.equal(lastState(actions, 'd1')?.status, 'creating');
  assert.deepEqual(webhooks(actions, 'deployment.scaled').map((e) => e.instance_count), [1]);
});

test('job: a running instance makes it running', () => {
  const d = job({ status: 'creating' });
  assert.equal(lastState(run({ deployments: [d], observed: [instance(d)] }), 'd1')?.status, 'running');
});

const exits: [number | null, string, string][] = [
  [0, 'completed', 'JobCompleted'],
  [3, 'failed', 'JobFailed'],
  [null, 'failed', 'JobFailed'],
];
for (const [exitCode, status, reason] of exits) {
  for (const from of ['creating', 'running'] as const) {
    test(`job: exit ${exitCode} from ${from} → ${status}, never restarted, instance kept`, () => {
      const d = job({ status: from });
      const exited = instance(d, { state: exitCode === null ? 'dead' : 'exited', exitCode });
      const actions = run({ deployments: [d], observed: [exited] });
      assert.equal(lastState(actions, 'd1')?.status, status);
      assert.equal(lastState(actions, 'd1')?.restartCount, 0);
      assert.ok(reasons(actions).includes(reason));
      assert.equal(creates(actions), 0);
      assert.deepEqual(removals(actions), []);
      const after = { ...d, ...lastState(actions, 'd1') };
      assert.deepEqual(run({ deployments: [after], observed: [exited] }), [], 'terminal: nothing more');
      assert.deepEqual(run({ deployments: [after] }), [], 'even with the instance gone');
    });
  }
}

test('job: an instance that vanished while running is failed (InstanceLost), not re-run', () => {
  const actions = run({ deployments: [job({ status: 'running' })] });
  assert.equal(lastState(actions, 'd1')?.status, 'failed');
  assert.ok(reasons(actions).includes('InstanceLost'));
  assert.equal(creates(actions), 0);
});

test('job: still creating with no instance and nothing in flight is created again (it never ran)', () => {
  assert.equal(creates(run({ deployments: [job({ status: 'creating' })] })), 1);
  assert.deepEqual(run({ deployments: [job({ status: 'creating' })], inFlight: { creations: [{ deploymentId: 'd1' }], removals: [] } }), []);
});

test('job: retried status waits for its backoff', () => {
  assert.deepEqual(run({ deployments: [job({ status: 'image_pull_back_off', backoffUntil: NOW + 1 })] }), []);
  assert.equal(creates(run({ deployments: [job({ status: 'image_pull_back_off', backoffUntil: NOW })] })), 1);
});

test('job: creating past the deadline is failed', () => {
  const d = job({ status: 'creating', statusSince: NOW - 300_001 });
  const actions = run({ deployments: [d], observed: [instance(d, { state: 'created' })] });
  assert.equal(lastState(actions, 'd1')?.status, 'failed');
});

// --- health checks -----------------------------------------------------------------------------------------

function withCheck(onFailure: OnFailureAction, threshold = 3) {
  const d = deployment({ status: 'running' }, { replicas: 2, health_checks: [{ ...TCP_CHECK, on_failure: onFailure, threshold }] });
  const good = instance(d);
  const bad = instance(d);
  const health = [
    { instanceId: good.id, checks: [check()] },
    {
      instanceId: bad.id,
      checks: [check({ lastStatus: 'timeout', consecutiveFailures: threshold, lastMessage: 'timed out after 5s' })],
    },
  ];
  return { d, good, bad, health };
}

test('health on_failure restart: event with instance and action, instance recreated', () => {
  const { d, good, bad, health } = withCheck('restart');
  const actions = run({ deployments: [d], observed: [good, bad], health });
  assert.deepEqual(webhooks(actions, 'deployment.health_check_failed'), [
    { schema_version: 1, deployment_id: 'd1', namespace: 'prod', name: 'web', kind: 'worker', instance_id: bad.id, action: 'restart', message: 'timed out after 5s' },
  ]);
  assert.deepEqual(removals(actions), [[bad.id, 'health_restart']]);
  assert.equal(creates(actions), 1);
  assert.equal(lastState(actions, 'd1'), undefined, 'a planned restart never counts');
  assert.ok(reasons(actions).includes('HealthCheckFailed'));
});

test('health on_failure stop: the deployment is marked deleted and its instances removed', () => {
  const { d, good, bad, health } = withCheck('stop');
  const actions = run({ deployments: [d], observed: [good, bad], health });
  assert.equal(lastState(actions, 'd1')?.status, 'deleted');
  assert.deepEqual(removals(actions).map(([, r]) => r), ['deleted', 'deleted']);
  assert.equal(creates(actions), 0);
  assert.deepEqual(webhooks(actions, 'deployment.health_check_failed').map((e) => e.action), ['stop']);
  assert.deepEqual(webhooks(actions, 'deployment.status_changed').map((e) => e.new_status), ['deleted']);
});

test('health on_failure alert: an error event only, acknowledged so it fires once per streak', () => {
  const { d, good, bad, health } = withCheck('alert');
  const actions = run({ deployments: [d], observed: [good, bad], health });
  assert.deepEqual(removals(actions), []);
  assert.equal(creates(actions), 0);
  assert.deepEqual(webhooks(actions, 'deployment.health_check_failed').map((e) => e.action), ['alert']);
  const record = actions.find((a): a is Extract<Action, { type: 'record' }> => a.type === 'record');
  assert.equal(record?.event.level, 'error');
  assert.equal(record?.event.component, 'health-check');
  assert.ok(actions.some((a) => a.type === 'ackHealth' && a.instanceId === bad.id && a.checkIndex === 0));
  const acked = health.map((h) => (h.instanceId === bad.id ? { ...h, checks: [{ ...h.checks[0]!, handled: true }] } : h));
  assert.deepEqual(run({ deployments: [d], observed: [good, bad], health: acked }), []);
});

test('health: below threshold, or never passed yet (startup), on_failure does not fire', () => {
  const { d, good, bad, health } = withCheck('restart', 4);
  const below = health.map((h) => (h.instanceId === bad.id ? { ...h, checks: [{ ...h.checks[0]!, consecutiveFailures: 3 }] } : h));
  assert.deepEqual(run({ deployments: [d], observed: [good, bad], health: below }), []);
  const neverPassed = health.map((h) => (h.instanceId === bad.id ? { ...h, checks: [{ ...h.checks[0]!, everSucceeded: false }] } : h));
  assert.deepEqual(run({ deployments: [d], observed: [good, bad], health: neverPassed }), []);
});

test('health: the default threshold 3 comes from the spec, a custom one is honoured', () => {
  const { d, good, bad, health } = withCheck('restart', 1);
  assert.equal(creates(run({ deployments: [d], observed: [good, bad], health })), 1);
});

test('simulated: restart on_failure replaces the instance and settles', () => {
  const { d, good, bad, health } = withCheck('restart');
  const world = new SimulatedWorld([d]);
  world.observed = [good, bad];
  for (const h of health) world.health.set(h.instanceId, h);
  world.step();
  assert.equal(world.instancesOf('d1').length, 2);
  assert.ok(!world.instancesOf('d1').some((i) => i.id === bad.id));
  assert.deepEqual(world.step(), []);
});
