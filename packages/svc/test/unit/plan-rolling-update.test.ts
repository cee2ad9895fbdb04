import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NOW,
  SimulatedWorld,
  TCP_CHECK,
  check,
  creates,
  deployment,
  healthy,
  instance,
  lastState,
  reasons,
  removals,
  run,
  webhooks,
} from './plan-fixtures.js';
import { planCreateFailure, servingParents } from '../../src/scheduler/plan.js';

function pair(parentReplicas = 2, childReplicas = 2, childChecks = true) {
  const parent = deployment({ id: 'p', status: 'running' }, { replicas: parentReplicas, health_checks: [TCP_CHECK] });
  const child = deployment(
    { id: 'c', parentId: 'p', status: 'creating', statusSince: NOW },
    { replicas: childReplicas, health_checks: childChecks ? [TCP_CHECK] : [] },
  );
  const parentInstances = Array.from({ length: parentReplicas }, (_, k) =>
    instance(parent, { startedAt: `2026-01-01T00:00:0${k}Z` }),
  );
  return { parent, child, parentInstances };
}

test('gradual: nothing is drained before a child instance is ready, and the parent is not touched', () => {
  const { parent, child, parentInstances } = pair();
  const c1 = instance(child);
  const actions = run({
    deployments: [parent, child],
    observed: [...parentInstances, c1],
    health: healthy(...parentInstances),
    inFlight: { creations: [{ deploymentId: 'c' }], removals: [] },
  });
  assert.deepEqual(removals(actions), []);
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update'), []);
});

test('gradual: a smaller child still waits for its first ready instance before any drain', () => {
  const { parent, child, parentInstances } = pair(2, 1);
  const c1 = instance(child);
  const actions = run({ deployments: [parent, child], observed: [...parentInstances, c1], health: healthy(...parentInstances) });
  assert.deepEqual(removals(actions), []);
  const ready = run({ deployments: [parent, child], observed: [...parentInstances, c1], health: healthy(...parentInstances, c1) });
  assert.equal(removals(ready).length, 1);
});

test('gradual: one ready child instance drains exactly one parent instance (the oldest), with a step event', () => {
  const { parent, child, parentInstances } = pair();
  const c1 = instance(child);
  const actions = run({
    deployments: [parent, child],
    observed: [...parentInstances, c1],
    health: healthy(...parentInstances, c1),
    inFlight: { creations: [{ deploymentId: 'c' }], removals: [] },
  });
  assert.deepEqual(removals(actions), [[parentInstances[0]!.id, 'rolling_update']]);
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update'), [
    { schema_version: 1, deployment_id: 'c', namespace: 'prod', name: 'web', kind: 'worker', parent_id: 'p', phase: 'step', drained_instance_id: parentInstances[0]!.id },
  ]);
  assert.ok(reasons(actions).includes('RollingUpdateStep'));
});

test('gradual: one at a time — a drain in flight blocks the next one', () => {
  const { parent, child, parentInstances } = pair();
  const c1 = instance(child);
  const c2 = instance(child);
  const actions = run({
    deployments: [parent, child],
    observed: [...parentInstances, c1, c2],
    health: healthy(...parentInstances, c1, c2),
    inFlight: { creations: [], removals: [parentInstances[0]!.id] },
  });
  assert.deepEqual(removals(actions), []);
});

test('gradual: capacity is kept — with 1 of 2 children ready and 1 parent left, the parent stays', () => {
  const { parent, child, parentInstances } = pair();
  const c1 = instance(child);
  const c2 = instance(child);
  const actions = run({
    deployments: [parent, child],
    observed: [parentInstances[1]!, c1, c2],
    health: healthy(parentInstances[1]!, c1),
  });
  assert.deepEqual(removals(actions), []);
});

test('gradual: an unready parent instance is drained first once a child is ready', () => {
  const { parent, child, parentInstances } = pair();
  const c1 = instance(child);
  const actions = run({
    deployments: [parent, child],
    observed: [...parentInstances, c1],
    health: [...healthy(parentInstances[0]!, c1), { instanceId: parentInstances[1]!.id, checks: [check({ lastStatus: 'failure' })] }],
    inFlight: { creations: [{ deploymentId: 'c' }], removals: [] },
  });
  assert.deepEqual(removals(actions), [[parentInstances[1]!.id, 'rolling_update']]);
});

test('gradual: the parent never scales back up while it is being drained', () => {
  const { parent, child } = pair();
  const actions = run({ deployments: [parent, child], inFlight: { creations: [{ deploymentId: 'c' }, { deploymentId: 'c' }], removals: [] } });
  assert.equal(creates(actions, 'p'), 0);
});

test('gradual: complete once the child runs and no parent instance is left; the parent is marked deleted', () => {
  const { parent, child } = pair();
  const c1 = instance(child);
  const c2 = instance(child);
  const actions = run({ deployments: [parent, child], observed: [c1, c2], health: healthy(c1, c2) });
  assert.equal(lastState(actions, 'c')?.status, 'running');
  assert.equal(lastState(actions, 'p')?.status, 'deleted');
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update').map((e) => [e.phase, e.parent_id, e.drained_instance_id]), [['complete', 'p', undefined]]);
  assert.deepEqual(
    webhooks(actions, 'deployment.status_changed').map((e) => [e.deployment_id, e.old_status, e.new_status]),
    [
      ['c', 'creating', 'running'],
      ['p', 'running', 'deleted'],
    ],
  );
});

test('gradual: a drained parent is not complete while the child is still creating', () => {
  const { parent, child } = pair();
  const c1 = instance(child);
  const actions = run({ deployments: [parent, child], observed: [c1], health: healthy(c1), inFlight: { creations: [{ deploymentId: 'c' }], removals: [] } });
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update'), []);
  assert.equal(lastState(actions, 'p'), undefined);
});

test('gradual, simulated end to end: 3 → 3 drains step by step and completes', () => {
  const { parent, child, parentInstances } = pair(3, 3);
  const world = new SimulatedWorld([parent, { ...child, status: 'pending' }]);
  world.observed = [...parentInstances];
  for (const h of healthy(...parentInstances)) world.health.set(h.instanceId, h);
  const phases: string[] = [];
  for (let tick = 0; tick < 10; tick += 1) {
    for (const e of webhooks(world.step(), 'deployment.rolling_update')) phases.push(e.phase);
  }
  assert.deepEqual(phases, ['step', 'step', 'step', 'complete']);
  assert.deepEqual(world.purged, ['p']);
  assert.equal(world.instancesOf('c').length, 3);
  assert.equal(world.get('c').status, 'running');
});

test('failed child: rolling_update failed is emitted, then the parent resumes and scales back up', () => {
  const { parent, child, parentInstances } = pair();
  const late = { ...child, statusSince: NOW - 300_001 };
  const c1 = instance(child);
  const actions = run({ deployments: [parent, late], observed: [parentInstances[1]!, c1] });
  assert.equal(lastState(actions, 'c')?.status, 'failed');
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update').map((e) => e.phase), ['failed']);
  assert.ok(reasons(actions).includes('RollingUpdateFailed'));
  const failedChild = { ...late, ...lastState(actions, 'c') };
  const next = run({ deployments: [parent, failedChild], observed: [parentInstances[1]!], health: healthy(parentInstances[1]!) });
  assert.equal(creates(next, 'p'), 1, 'the parent is whole again');
  assert.equal(lastState(next, 'p'), undefined, 'and keeps running');
});

test('failed child through a create failure reports the rolling update as failed', () => {
  const { parent, child } = pair();
  const parents = servingParents([parent, child], 'c');
  assert.deepEqual(parents.map((p) => p.id), ['p']);
  const actions = planCreateFailure(child, { status: 'insufficient_resources', category: 'host', message: 'no memory' }, NOW, parents.length > 0);
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update').map((e) => e.phase), ['failed']);
  assert.deepEqual(servingParents([parent, child], 'p'), []);
});

test('a child stopped by its own health check (on_failure stop) fails the rolling update', () => {
  const { parent, parentInstances } = pair();
  const child = deployment({ id: 'c', parentId: 'p', status: 'creating', statusSince: NOW }, { replicas: 1, health_checks: [{ ...TCP_CHECK, on_failure: 'stop' }] });
  const c1 = instance(child);
  const actions = run({
    deployments: [parent, child],
    observed: [...parentInstances, c1],
    health: [...healthy(...parentInstances), { instanceId: c1.id, checks: [check({ lastStatus: 'failure', consecutiveFailures: 3 })] }],
  });
  assert.equal(lastState(actions, 'c')?.status, 'deleted');
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update').map((e) => e.phase), ['failed']);
  assert.deepEqual(removals(actions), [[c1.id, 'deleted']], 'the parent keeps all its instances');
});

test('a child deleted by the user mid-rollout hands control back to the parent', () => {
  const { parent, child, parentInstances } = pair();
  const actions = run({ deployments: [parent, { ...child, status: 'deleted' }], observed: [parentInstances[0]!], health: healthy(parentInstances[0]!) });
  assert.equal(creates(actions, 'p'), 1);
});

test('immediate with force: the parent is marked deleted and replaced at once', () => {
  const { parent, child, parentInstances } = pair();
  const forced = { ...child, status: 'pending' as const, force: true };
  const actions = run({ deployments: [parent, forced], observed: parentInstances, health: healthy(...parentInstances) });
  assert.equal(creates(actions, 'c'), 2);
  assert.deepEqual(removals(actions).map(([, r]) => r), ['rolling_update', 'rolling_update']);
  assert.equal(lastState(actions, 'p')?.status, 'deleted');
  assert.deepEqual(webhooks(actions, 'deployment.rolling_update'), [], 'the rolling path is bypassed');
  assert.ok(reasons(actions).includes('Replaced'));
});

test('immediate without health checks on the child', () => {
  const { parent, child, parentInstances } = pair(2, 2, false);
  const actions = run({ deployments: [parent, { ...child, status: 'pending' }], observed: parentInstances, health: healthy(...parentInstances) });
  assert.equal(lastState(actions, 'p')?.status, 'deleted');
  assert.equal(creates(actions, 'c'), 2);
});

test('same published port: the child waits until the old instance is gone, then starts', () => {
  const parent = deployment({ id: 'p', status: 'running' }, { ports: [{ published: 8080, target: 80 }], health_checks: [TCP_CHECK] });
  const child = deployment({ id: 'c', parentId: 'p', status: 'pending' }, { ports: [{ published: 8080, target: 80 }], health_checks: [TCP_CHECK] });
  const old = instance(parent);
  const first = run({ deployments: [parent, child], observed: [old], health: healthy(old) });
  assert.equal(creates(first, 'c'), 0);
  assert.deepEqual(removals(first), [[old.id, 'rolling_update']]);
  assert.equal(lastState(first, 'p')?.status, 'deleted');
  const deletedParent = { ...parent, ...lastState(first, 'p') };
  assert.equal(creates(run({ deployments: [deletedParent, child], observed: [old], inFlight: { creations: [], removals: [old.id] } }), 'c'), 0);
  const third = run({ deployments: [deletedParent, child] });
  assert.equal(creates(third, 'c'), 1);
  assert.ok(third.some((a) => a.type === 'purge' && a.deploymentId === 'p'));
});

test('host networking is exclusive too', () => {
  const parent = deployment({ id: 'p', status: 'running' }, { network: { mode: 'host' }, health_checks: [TCP_CHECK] });
  const child = deployment({ id: 'c', parentId: 'p', status: 'pending' }, { health_checks: [TCP_CHECK] });
  const actions = run({ deployments: [parent, child], observed: [instance(parent)] });
  assert.equal(creates(actions, 'c'), 0);
  assert.equal(lastState(actions, 'p')?.status, 'deleted');
});

test('a chain p ← c1 ← c2: the newest drains both and completes both', () => {
  const p = deployment({ id: 'p', status: 'running' }, { replicas: 1, health_checks: [TCP_CHECK] });
  const c1 = deployment({ id: 'c1', parentId: 'p', status: 'creating' }, { replicas: 1, health_checks: [TCP_CHECK] });
  const c2 = deployment({ id: 'c2', parentId: 'c1', status: 'creating' }, { replicas: 1, health_checks: [TCP_CHECK] });
  const world = new SimulatedWorld([p, c1, c2]);
  const pi = instance(p);
  world.observed = [pi];
  world.health.set(pi.id, { instanceId: pi.id, checks: [check()] });
  for (let tick = 0; tick < 8; tick += 1) world.step();
  assert.deepEqual([...world.purged].sort(), ['c1', 'p']);
  assert.equal(world.get('c2').status, 'running');
  assert.equal(world.instancesOf('c2').length, 1);
});
