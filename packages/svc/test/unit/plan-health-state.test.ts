import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UNPROBED, rebuildCheckHealth, recordProbe } from '../../src/scheduler/health-state.js';
import { plan } from '../../src/scheduler/plan.js';
import { NOW, TCP_CHECK, deployment, instance } from './plan-fixtures.js';

test('a failure streak counts up, a success resets it and re-arms', () => {
  let state = recordProbe(undefined, 'failure', 'refused');
  assert.deepEqual(state, { lastStatus: 'failure', consecutiveFailures: 1, everSucceeded: false, handled: false, lastMessage: 'refused' });
  state = recordProbe(state, 'success', null);
  assert.deepEqual(state, { lastStatus: 'success', consecutiveFailures: 0, everSucceeded: true, handled: false, lastMessage: null });
  state = recordProbe(recordProbe(state, 'timeout', 't'), 'failure', 'f');
  assert.equal(state.consecutiveFailures, 2);
  assert.equal(state.everSucceeded, true);
  assert.equal(state.lastMessage, 'f');
  state = recordProbe({ ...state, handled: true }, 'failure', 'f');
  assert.equal(state.handled, true, 'an acknowledged streak stays acknowledged');
  assert.equal(recordProbe(state, 'success', null).handled, false);
});

test('rebuild from stored results equals folding them', () => {
  const results = [
    { status: 'failure' as const, message: 'a' },
    { status: 'success' as const, message: null },
    { status: 'failure' as const, message: 'b' },
    { status: 'timeout' as const, message: 'c' },
  ];
  assert.deepEqual(rebuildCheckHealth(results), { lastStatus: 'timeout', consecutiveFailures: 2, everSucceeded: true, handled: false, lastMessage: 'c' });
  assert.deepEqual(rebuildCheckHealth([]), UNPROBED);
});

test('threshold 3: the plan acts on the third consecutive failure after a success, not before', () => {
  const d = deployment({ status: 'running' }, { replicas: 1, health_checks: [TCP_CHECK] });
  const i = instance(d);
  let state = recordProbe(undefined, 'success', null);
  const actsAfter: number[] = [];
  for (let probe = 1; probe <= 3; probe += 1) {
    state = recordProbe(state, 'failure', 'down');
    const actions = plan({ deployments: [d], observed: [i], health: [{ instanceId: i.id, checks: [state] }], inFlight: { creations: [], removals: [] }, now: NOW });
    if (actions.some((a) => a.type === 'remove')) actsAfter.push(probe);
  }
  assert.deepEqual(actsAfter, [3]);
});
