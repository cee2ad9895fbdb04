import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseEntrypoint } from '../../src/config/entrypoint-schema.js';

const OPTIONS = { source: 'api', requireCoreConfigFields: true } as const;

test('any JSON value is either a normalized entrypoint or a list of issues, never an exception', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const result = parseEntrypoint(value, OPTIONS);
      assert.ok((result.entrypoint === null) !== (result.issues.length === 0));
    }),
    { numRuns: 500 },
  );
});

test('near-valid bodies: normalizing a normalized entrypoint changes nothing', () => {
  const backend = fc.record({ address: fc.constantFrom('10.0.0.1', '::1', 'svc.internal'), port: fc.integer({ min: -5, max: 70000 }), weight: fc.option(fc.integer({ min: -2, max: 500 }), { nil: undefined }) });
  const body = fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
    protocol: fc.constantFrom('Http', 'Tcp', 'Udp'),
    backends: fc.array(backend, { maxLength: 3 }),
    config: fc.record({
      hostnames: fc.array(fc.constantFrom('a.example.com', '*.example.com', '/^x[0-9]+$/', '/(/'), { maxLength: 3 }),
      priority: fc.integer({ min: -10, max: 10 }),
      entrypoint: fc.constantFrom(null, 'db'),
      strip_prefix: fc.boolean(),
      add_prefix: fc.constantFrom(null, '/v1'),
      methods: fc.array(fc.constantFrom('get', 'POST'), { maxLength: 2 }),
    }),
  });
  fc.assert(
    fc.property(body, (input) => {
      const first = parseEntrypoint(JSON.parse(JSON.stringify(input)), OPTIONS);
      if (!first.entrypoint) {
        assert.ok(first.issues.length > 0);
        return;
      }
      const second = parseEntrypoint(JSON.parse(JSON.stringify(first.entrypoint)), OPTIONS);
      assert.deepEqual(second.entrypoint, first.entrypoint);
    }),
    { numRuns: 500 },
  );
});
