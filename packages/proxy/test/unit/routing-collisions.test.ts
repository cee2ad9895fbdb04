import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { findCollisions } from '../../src/routing/collisions.js';
import { httpRoute } from './routing-helpers.js';

test('overlapping hosts and paths report the winner, the shadowed routes and a witness', () => {
  const result = findCollisions([
    httpRoute('api', { hostnames: ['a.ex.com'], path: { rule_type: 'Prefix', value: '/api' } }),
    httpRoute('wild', { hostnames: ['*.ex.com'] }),
    httpRoute('other', { hostnames: ['b.org'] }),
  ]);
  assert.deepEqual(result, [
    { winner: 'http_api', shadowed: ['http_wild'], example: { host: 'a.ex.com', path: '/api', method: 'GET' } },
  ]);
});

test('disjoint methods, hosts or segment-aware prefixes do not collide', () => {
  assert.deepEqual(
    findCollisions([
      httpRoute('get', { methods: ['GET'] }),
      httpRoute('post', { methods: ['POST'] }),
    ]),
    [],
  );
  assert.deepEqual(
    findCollisions([
      httpRoute('a', { path: { rule_type: 'Prefix', value: '/api' } }),
      httpRoute('b', { path: { rule_type: 'Prefix', value: '/apidocs' } }),
    ]),
    [],
  );
  assert.deepEqual(
    findCollisions([httpRoute('a', { hostnames: ['*.ex.com'] }), httpRoute('b', { hostnames: ['ex.com'] })]),
    [],
  );
});

test('priority decides the winner and regex overlaps are witnessed', () => {
  const result = findCollisions([
    httpRoute('low', { hostnames: ['x.ex.com'], path: { rule_type: 'Exact', value: '/u/1' } }),
    httpRoute('high', { priority: 10, path: { rule_type: 'Regex', value: '/u/[0-9]+' } }),
  ]);
  assert.equal(result.length, 1);
  assert.equal(result[0]?.winner, 'http_high');
  assert.deepEqual(result[0]?.shadowed, ['http_low']);
  assert.equal(result[0]?.example.path, '/u/1');
});

test('property: result is independent of the input order', () => {
  const arb = fc.uniqueArray(
    fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      priority: fc.integer({ min: 0, max: 1 }),
      host: fc.constantFrom<string[]>([], ['a.ex.com'], ['*.ex.com'], ['/.*\\.ex\\.com/']),
      path: fc.constantFrom(null, { rule_type: 'Prefix' as const, value: '/x' }, { rule_type: 'Exact' as const, value: '/x' }),
    }),
    { selector: (r) => r.name, maxLength: 5 },
  );
  fc.assert(
    fc.property(arb, (specs) => {
      const eps = specs.map((s) => httpRoute(s.name, { priority: s.priority, hostnames: s.host, path: s.path }));
      assert.deepEqual(findCollisions(eps), findCollisions([...eps].reverse()));
    }),
    { numRuns: 300 },
  );
});
