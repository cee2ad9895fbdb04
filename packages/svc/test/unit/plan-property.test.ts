// Property tests: random deployments, random faults (crashes, containers removed behind our back, failing health
// checks, deletes, create failures), and a simulated executor. After every plan the invariants must hold, and a
// quiet period must always converge to a fixed point.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { NOW, SimulatedWorld, TCP_CHECK, check, deployment } from './plan-fixtures.js';
import {
  plan,
  planCreateFailure,
  servingParents,
  type Action,
  type DesiredDeployment,
  type PlanInput,
} from '../../src/scheduler/plan.js';
import { MAX_RESTARTS, TERMINAL_STATUSES, type DeploymentStatus, type OnFailureAction } from '../../src/domain/deployment.js';
import type { FailureStatus } from '../../src/runtime/runtime.js';

const deploymentArb = fc.record({
  kind: fc.constantFrom('worker' as const, 'worker' as const, 'job' as const),
  replicas: fc.integer({ min: 0, max: 3 }),
  checks: fc.boolean(),
  onFailure: fc.constantFrom<OnFailureAction>('restart', 'stop', 'alert'),
  status: fc.constantFrom<DeploymentStatus>('pending', 'pending', 'running', 'creating', 'image_pull_back_off', 'completed', 'deleted'),
  childOfPrevious: fc.boolean(),
  force: fc.boolean(),
  port: fc.option(fc.constant(8080), { nil: undefined }),
});

const stepArb = fc.oneof(
  fc.record({ type: fc.constant('tick' as const), advance: fc.integer({ min: 0, max: 400_000 }) }),
  fc.record({ type: fc.constant('crash' as const), pick: fc.nat(), code: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ type: fc.constant('vanish' as const), pick: fc.nat() }),
  fc.record({ type: fc.constant('unhealthy' as const), pick: fc.nat() }),
  fc.record({ type: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({
    type: fc.constant('createFails' as const),
    status: fc.constantFrom<FailureStatus>('image_pull_back_off', 'create_container_error', 'config_error', 'error', 'insufficient_resources', 'failed'),
  }),
  fc.record({ type: fc.constant('orphan' as const) }),
);

type GeneratedDeployment = typeof deploymentArb extends fc.Arbitrary<infer T> ? T : never;

function build(specs: GeneratedDeployment[]): DesiredDeployment[] {
  return specs.map((s, index) => {
    const kind = s.kind;
    const replicas = kind === 'job' ? 1 : s.port !== undefined ? Math.min(1, s.replicas) : s.replicas;
    const parent = index > 0 && s.childOfPrevious ? `d${index - 1}` : null;
    return deployment(
      { id: `d${index}`, status: s.status, parentId: parent, force: s.force, statusSince: NOW },
      {
        name: parent === null ? `app${index}` : 'shared',
        kind,
        replicas,
        health_checks: kind === 'worker' && s.checks ? [{ ...TCP_CHECK, on_failure: s.onFailure }] : [],
        ports: s.port === undefined || kind === 'job' ? [] : [{ published: s.port + index, target: 80 }],
      },
    );
  });
}

/** Everything the plan says about status must be mirrored by exactly one status_changed event. */
function checkStatusEvents(input: PlanInput, actions: Action[]): void {
  const before = new Map(input.deployments.map((d) => [d.id, d.status]));
  const changes = actions.flatMap((a) => (a.type === 'emit' && a.event.kind === 'deployment.status_changed' ? [a.event.payload] : []));
  for (const a of actions) {
    if (a.type !== 'setStatus') continue;
    const old = before.get(a.deploymentId);
    const mine = changes.filter((c) => c.deployment_id === a.deploymentId);
    if (old === a.state.status) assert.equal(mine.length, 0, 'no status_changed without a change');
    else {
      assert.ok(mine.length >= 1, `status change ${old} → ${a.state.status} without event`);
      assert.equal(mine[0]?.old_status, old);
      assert.equal(mine.at(-1)?.new_status, a.state.status);
    }
  }
}

function checkInvariants(world: SimulatedWorld, input: PlanInput, actions: Action[]): void {
  // Deterministic.
  assert.deepEqual(plan(input), actions);
  checkStatusEvents(input, actions);
  // No instance removed twice; only known or orphan instances removed.
  const removed = actions.flatMap((a) => (a.type === 'remove' ? [a.instanceId] : []));
  assert.equal(new Set(removed).size, removed.length, 'an instance removed twice');
  for (const id of removed) assert.ok(input.observed.some((i) => i.id === id), 'removal of an unknown instance');
  // Scaled events stay within 0..replicas.
  for (const a of actions) {
    if (a.type === 'emit' && a.event.kind === 'deployment.scaled') {
      assert.ok(a.event.payload.instance_count >= 0 && a.event.payload.instance_count <= a.event.payload.replicas);
    }
  }
  // Terminal deployments only ever move to deleted; restart counts only grow and stop at the maximum.
  for (const a of actions) {
    if (a.type !== 'setStatus') continue;
    const before = input.deployments.find((d) => d.id === a.deploymentId);
    assert.ok(before !== undefined);
    if (TERMINAL_STATUSES.has(before.status)) assert.equal(a.state.status, 'deleted', `left terminal ${before.status}`);
    assert.ok(a.state.restartCount >= before.restartCount && a.state.restartCount <= MAX_RESTARTS);
  }

  // Idempotence: with this plan's work recorded as in flight and its state written, a second plan repeats nothing.
  const inFlight = {
    creations: actions.flatMap((a) => (a.type === 'create' ? [{ deploymentId: a.deploymentId }] : [])),
    removals: removed,
  };
  const written = input.deployments.map((d) => {
    const state = actions.filter((a) => a.type === 'setStatus' && a.deploymentId === d.id).at(-1);
    return state?.type === 'setStatus' ? { ...d, ...state.state } : d;
  });
  const purged = new Set(actions.flatMap((a) => (a.type === 'purge' ? [a.deploymentId] : [])));
  const acked = input.health.map((h) => ({
    ...h,
    checks: h.checks.map((c, index) =>
      actions.some((a) => a.type === 'ackHealth' && a.instanceId === h.instanceId && a.checkIndex === index) ? { ...c, handled: true } : c,
    ),
  }));
  const again = plan({ ...input, deployments: written.filter((d) => !purged.has(d.id)), inFlight, health: acked });
  const repeated = again.filter((a) => a.type !== 'purge');
  assert.deepEqual(repeated, [], `second run repeated work: ${JSON.stringify(repeated)}`);
  void world;
}

function liveWithinReplicas(world: SimulatedWorld): void {
  for (const d of world.deployments) {
    const live = world.instancesOf(d.id).filter((i) => i.state === 'running').length;
    assert.ok(live <= Math.max(d.spec.replicas, 0), `${d.id} has ${live} live > ${d.spec.replicas}`);
  }
}

test('plan: invariants under random faults, and convergence to a fixed point', () => {
  fc.assert(
    fc.property(fc.array(deploymentArb, { minLength: 1, maxLength: 4 }), fc.array(stepArb, { maxLength: 25 }), (specs, steps) => {
      const world = new SimulatedWorld(build(specs));
      let failNext: FailureStatus | null = null;
      let orphans = 0;
      const tick = () => {
        const input = world.input();
        const actions = plan(input);
        checkInvariants(world, input, actions);
        if (failNext !== null) {
          const status = failNext;
          failNext = null;
          const failing = new Set(actions.flatMap((a) => (a.type === 'create' ? [a.deploymentId] : [])));
          world.apply(actions.filter((a) => a.type !== 'create'));
          for (const id of failing) {
            const d = world.deployments.find((x) => x.id === id);
            if (d === undefined) continue;
            const parents = servingParents(world.deployments, id);
            world.apply(planCreateFailure(d, { status, category: 'user', message: 'simulated' }, world.now, parents.length > 0));
          }
        } else {
          world.apply(actions);
        }
        liveWithinReplicas(world);
        return actions;
      };
      for (const step of steps) {
        const instances = world.observed;
        const target = instances.length === 0 ? undefined : instances[('pick' in step ? step.pick : 0) % instances.length];
        switch (step.type) {
          case 'tick':
            world.now += step.advance;
            tick();
            break;
          case 'crash':
            if (target !== undefined) Object.assign(target, { state: 'exited', exitCode: step.code, finishedAt: new Date(world.now).toISOString() });
            break;
          case 'vanish':
            if (target !== undefined) world.observed = instances.filter((i) => i !== target);
            break;
          case 'unhealthy': {
            const h = target === undefined ? undefined : world.health.get(target.id);
            if (h !== undefined) h.checks = h.checks.map(() => check({ lastStatus: 'failure', consecutiveFailures: 10, lastMessage: 'down' }));
            break;
          }
          case 'delete': {
            const d = world.deployments[step.pick % Math.max(1, world.deployments.length)];
            if (d !== undefined) d.status = 'deleted';
            break;
          }
          case 'createFails':
            failNext = step.status;
            break;
          case 'orphan':
            world.observed.push({ ...(instances[0] ?? { id: 'x', name: 'x', specHash: 'h', state: 'running', exitCode: null, startedAt: null, finishedAt: null, address: null, imageDigest: null, deploymentId: 'x' }), id: `orphan-${(orphans += 1)}`, deploymentId: 'no-such-deployment' });
            break;
        }
      }
      // Quiet period: time moves past every backoff and deadline; the plan must reach a fixed point.
      let quiet = 0;
      for (; quiet < 30; quiet += 1) {
        world.now += 400_000;
        if (tick().length === 0) break;
      }
      assert.ok(quiet < 30, 'no fixed point after 30 quiet ticks');
      assert.equal(world.observed.filter((i) => i.deploymentId === 'no-such-deployment').length, 0, 'orphans left');
      for (const d of world.deployments) {
        const live = world.instancesOf(d.id).filter((i) => i.state === 'running').length;
        if (d.status === 'running' && d.spec.kind === 'worker' && servingParents(world.deployments, d.id).length === 0) {
          const drained = world.deployments.some((c) => c.parentId === d.id && c.status !== 'deleted' && !TERMINAL_STATUSES.has(c.status));
          if (!drained) assert.equal(live, d.spec.replicas, `${d.id} running with ${live}/${d.spec.replicas}`);
        }
        assert.notEqual(d.status, 'deleted', 'deleted deployments are purged');
        assert.notEqual(d.status, 'pending', 'nothing stays pending');
      }
    }),
    { numRuns: 400, seed: 20261123, includeErrorInReport: true },
  );
});

test('rolling update: ready capacity never drops below min(child, parent) replicas, and the update completes', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 0, max: 4 }),
      fc.array(fc.oneof(fc.constant('tick' as const), fc.nat()), { maxLength: 40 }),
      (parentReplicas, childReplicas, steps) => {
        const parent = deployment({ id: 'p', status: 'running' }, { replicas: parentReplicas, health_checks: [TCP_CHECK] });
        const child = deployment({ id: 'c', parentId: 'p', status: 'pending' }, { replicas: childReplicas, health_checks: [TCP_CHECK] });
        const world = new SimulatedWorld([parent, child], false);
        world.observed = Array.from({ length: parentReplicas }, (_, k) => ({
          id: `p-old${k}`,
          name: `prod_web_old${k}`,
          deploymentId: 'p',
          specHash: parent.specHash,
          state: 'running' as const,
          exitCode: null,
          startedAt: `2026-01-01T00:00:0${k}Z`,
          finishedAt: null,
          address: null,
          imageDigest: null,
        }));
        for (const i of world.observed) world.health.set(i.id, { instanceId: i.id, checks: [check()] });
        const target = Math.min(parentReplicas, childReplicas);
        const readyCapacity = () =>
          world.observed.filter((i) => i.state === 'running' && world.health.get(i.id)?.checks.every((c) => c.lastStatus === 'success')).length;
        const markReady = (pick: number) => {
          const unready = world.observed.filter((i) => i.deploymentId === 'c' && world.health.get(i.id)?.checks[0]?.lastStatus !== 'success');
          const chosen = unready[pick % Math.max(1, unready.length)];
          if (chosen !== undefined) world.health.set(chosen.id, { instanceId: chosen.id, checks: [check()] });
        };
        for (const step of steps) {
          if (step === 'tick') {
            world.now += 1000;
            world.step();
            assert.ok(readyCapacity() >= target, `capacity ${readyCapacity()} < ${target}`);
          } else markReady(step);
        }
        for (let k = 0; k < 20 && world.deployments.some((d) => d.id === 'p'); k += 1) {
          markReady(0);
          world.now += 1000;
          world.step();
          assert.ok(readyCapacity() >= target);
        }
        assert.deepEqual(world.purged, ['p'], 'the parent is drained, deleted and purged');
        assert.equal(world.get('c').status, 'running');
        assert.equal(world.instancesOf('c').length, childReplicas);
      },
    ),
    { numRuns: 300, seed: 7, includeErrorInReport: true },
  );
});
