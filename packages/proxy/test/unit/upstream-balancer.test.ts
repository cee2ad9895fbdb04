import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  affinityIndex,
  effectiveWeights,
  smoothWeightedPick,
  type BalancerPeer,
} from '../../src/upstream/balancer.js';
import { backendKey, parseListenAddress } from '../../src/upstream/address.js';

function peers(weights: number[], unhealthy: number[] = [], excluded: number[] = []): BalancerPeer[] {
  return weights.map((weight, i) => ({ weight, healthy: !unhealthy.includes(i), excluded: excluded.includes(i) }));
}

function sequence(list: BalancerPeer[], count: number): number[] {
  const weights = effectiveWeights(list);
  let current: number[] = [];
  const out: number[] = [];
  for (let n = 0; n < count; n++) {
    const selection = smoothWeightedPick(weights, current);
    assert.ok(selection);
    out.push(selection.index);
    current = selection.current;
  }
  return out;
}

test('weights 5/1/1 give nginx\'s smooth sequence a a b a c a a, repeating', () => {
  const names = sequence(peers([5, 1, 1]), 14).map((i) => 'abc'[i]).join('');
  assert.equal(names, 'aabacaa' + 'aabacaa');
});

test('distribution over a full cycle matches the weights exactly', () => {
  const counts = [0, 0, 0];
  for (const i of sequence(peers([3, 2, 5]), 100)) counts[i] = (counts[i] ?? 0) + 1;
  assert.deepEqual(counts, [30, 20, 50]);
});

test('equal weights alternate round robin', () => {
  assert.deepEqual(sequence(peers([100, 100]), 4), [0, 1, 0, 1]);
});

test('unhealthy backends are never chosen while a healthy one remains', () => {
  const picks = sequence(peers([1, 1, 1], [1]), 30);
  assert.ok(!picks.includes(1));
  assert.ok(picks.includes(0) && picks.includes(2));
});

test('fail open: when no backend is healthy, all are balanced', () => {
  const picks = new Set(sequence(peers([1, 1], [0, 1]), 4));
  assert.deepEqual([...picks].sort(), [0, 1]);
});

test('fail open considers only the non-excluded backends; all excluded gives no pick', () => {
  assert.deepEqual(effectiveWeights(peers([1, 1, 1], [0, 1, 2], [0])), [0, 1, 1]);
  assert.equal(smoothWeightedPick(effectiveWeights(peers([1, 1], [], [0, 1])), []), null);
  assert.equal(smoothWeightedPick([], []), null);
});

test('excluded backends are skipped even when healthy', () => {
  const picks = sequence(peers([5, 1], [], [0]), 5);
  assert.deepEqual(picks, [1, 1, 1, 1, 1]);
});

test('weight 0 is never chosen while another positive weight is a candidate', () => {
  assert.ok(!sequence(peers([0, 1]), 20).includes(0));
  // ... but takes over when the weighted one is unhealthy, and all-zero pools share equally.
  assert.deepEqual([...new Set(sequence(peers([0, 1], [1]), 5))], [0]);
  assert.deepEqual(sequence(peers([0, 0]), 4), [0, 1, 0, 1]);
});

test('affinity is honoured only for a healthy candidate', () => {
  const list = peers([1, 1, 0], [1]);
  const weights = effectiveWeights(list);
  assert.equal(affinityIndex(list, weights, 0), 0);
  assert.equal(affinityIndex(list, weights, 1), null, 'unhealthy');
  assert.equal(affinityIndex(list, weights, 2), null, 'weight 0 while others weigh more');
  assert.equal(affinityIndex(list, weights, 7), null, 'unknown');
  const excluded = peers([1, 1], [], [0]);
  assert.equal(affinityIndex(excluded, effectiveWeights(excluded), 0), null, 'excluded');
});

test('property: over sum(weights) picks each healthy backend gets exactly its weight', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 6 }), (weights) => {
      const total = weights.reduce((a, b) => a + b, 0);
      const counts = weights.map(() => 0);
      for (const i of sequence(peers(weights), total)) counts[i] = (counts[i] ?? 0) + 1;
      assert.deepEqual(counts, weights);
    }),
    { numRuns: 200 },
  );
});

test('backend keys bracket IPv6', () => {
  assert.equal(backendKey('10.0.0.1', 80), '10.0.0.1:80');
  assert.equal(backendKey('::1', 8080), '[::1]:8080');
  assert.equal(backendKey('db.internal', 5432), 'db.internal:5432');
});

test('listen addresses parse host, bracketed IPv6 and bare ports; garbage is rejected', () => {
  assert.deepEqual(parseListenAddress('0.0.0.0:5432'), { host: '0.0.0.0', port: 5432 });
  assert.deepEqual(parseListenAddress('[::]:53'), { host: '::', port: 53 });
  assert.deepEqual(parseListenAddress(':8080'), { host: '0.0.0.0', port: 8080 });
  assert.deepEqual(parseListenAddress('localhost:0'), { host: 'localhost', port: 0 });
  for (const bad of ['', '5432', 'host:', 'host:70000', '[zz]:1', '::1:80', 'a b:1', 'host:-1']) {
    assert.equal(parseListenAddress(bad), null, bad);
  }
});
