import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { findCollisions, scanCollisions, scanCollisionsPairwise } from '../../src/routing/collisions.js';
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

test('property: the bucketed scan finds exactly what comparing every pair finds', () => {
  const hostArb = fc.constantFrom(
    'a.ex.com',
    'b.ex.com',
    'ex.com',
    'A.Ex.com.',
    'a.ex.com:8080',
    'x.a.ex.com',
    'localhost',
    '*.ex.com',
    '*.com',
    '*.a.ex.com',
    '/.*\\.ex\\.com/',
    '/a\\..*/',
    '/[a-z]+\\.ex\\.com/',
    '*',
  );
  const pathArb = fc.constantFrom(
    null,
    { rule_type: 'Prefix' as const, value: '/' },
    { rule_type: 'Prefix' as const, value: '/x' },
    { rule_type: 'Exact' as const, value: '/x' },
    { rule_type: 'Exact' as const, value: '/y/1' },
    { rule_type: 'Regex' as const, value: '/y/[0-9]+' },
  );
  const arb = fc.uniqueArray(
    fc.record({
      name: fc.stringMatching(/^[a-h]$/),
      priority: fc.integer({ min: 0, max: 2 }),
      hostnames: fc.uniqueArray(hostArb, { maxLength: 3 }),
      path: pathArb,
      methods: fc.constantFrom<string[]>([], ['GET'], ['POST'], ['GET', 'PUT']),
    }),
    { selector: (r) => r.name, maxLength: 8 },
  );
  fc.assert(
    fc.property(arb, (specs) => {
      const eps = specs.map((s) => httpRoute(s.name, s));
      const bucketed = scanCollisions(eps);
      const pairwise = scanCollisionsPairwise(eps);
      assert.deepEqual(bucketed.collisions, pairwise.collisions);
      assert.deepEqual(findCollisions(eps), pairwise.collisions);
      assert.ok(bucketed.comparisons <= pairwise.comparisons);
    }),
    { numRuns: 1000 },
  );
});

test('10,000 routes with distinct exact hosts are scanned without comparing any pair', () => {
  const eps = Array.from({ length: 10_000 }, (_, i) => httpRoute(`r${i}`, { hostnames: [`h${i}.ex${i % 100}.com`] }));
  assert.deepEqual(scanCollisions(eps), { collisions: [], comparisons: 0 });
  // A wildcard meets only the exact hosts one label under its domain (100 of them), a host-less route meets all.
  const withWildcard = [...eps, httpRoute('wild', { hostnames: ['*.ex7.com'] })];
  const wild = scanCollisions(withWildcard);
  assert.equal(wild.comparisons, 100);
  assert.equal(wild.collisions.length, 100);
  assert.ok(wild.collisions.every((c) => c.shadowed.length === 1 && c.shadowed[0] === 'http_wild'));
  const withCatchAll = [...eps, httpRoute('all', { path: { rule_type: 'Prefix', value: '/' } })];
  assert.equal(scanCollisions(withCatchAll).comparisons, 10_000);
});
