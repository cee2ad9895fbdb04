import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRoutesFile } from '../../src/providers/config/routes-file.js';

const FILE = '/srv/routes.yaml';

test('a valid routes file yields normalized entrypoints with source config', () => {
  const { state, error } = parseRoutesFile('entrypoints:\n  - name: web\n    protocol: Http\n    backends: [ { address: 10.0.0.1, port: 80 } ]\n    config: { hostnames: [a.example.com] }\n', FILE);
  assert.equal(error, null);
  assert.deepEqual(state?.entrypoints.map((e) => [e.id, e.source, e.config.priority]), [['http_web', 'config', 0]]);
  assert.deepEqual(state?.diagnostics, []);
});

test('JSON is accepted, and an empty file is an empty set', () => {
  const json = JSON.stringify({ entrypoints: [{ name: 'a', protocol: 'Http', backends: [{ address: 'h', port: 1 }], config: {} }] });
  assert.equal(parseRoutesFile(json, '/srv/routes.json').state?.entrypoints.length, 1);
  assert.deepEqual(parseRoutesFile('', FILE).state, { entrypoints: [], diagnostics: [] });
});

test('a broken file is E003 with file:line:column and no state', () => {
  const syntax = parseRoutesFile('entrypoints:\n  - name: [\n', FILE);
  assert.equal(syntax.state, null);
  assert.equal(syntax.error?.diagnostic.code, 'E003');
  assert.match(syntax.error?.diagnostic.message ?? '', /^\/srv\/routes\.yaml:\d+:\d+: /);
  const shape = parseRoutesFile('routes: []\n', FILE);
  assert.equal(shape.error?.diagnostic.message, '/srv/routes.yaml:1:1: unknown key "routes" (allowed: entrypoints)');
  assert.match(parseRoutesFile('entrypoints: 5\n', FILE).error?.diagnostic.message ?? '', /:1:14: entrypoints must be a list/);
  assert.match(parseRoutesFile('- a\n', FILE).error?.diagnostic.message ?? '', /:1:1: must be a map/);
});

test('an invalid entry is skipped with a diagnostic on its id and a position; the others stay', () => {
  const text = 'entrypoints:\n  - name: ok\n    protocol: Http\n    backends: [ { address: h, port: 1 } ]\n    config: {}\n  - name: bad\n    protocol: Http\n    backends: [ { address: h, port: 99999 } ]\n    config: {}\n';
  const { state } = parseRoutesFile(text, FILE);
  assert.deepEqual(state?.entrypoints.map((e) => e.id), ['http_ok']);
  assert.equal(state?.diagnostics.length, 1);
  const d = state?.diagnostics[0];
  assert.equal(d?.candidate_id, 'http_bad');
  assert.equal(d?.diagnostic.code, 'W001');
  assert.match(d?.diagnostic.message ?? '', /^\/srv\/routes\.yaml:8:37: entrypoints\[1\]\.backends\[0\]\.port: port must be an integer between 1 and 65535, got 99999; entrypoint skipped$/);
});

test('an entry without a readable name is a global diagnostic', () => {
  const { state } = parseRoutesFile('entrypoints:\n  - protocol: Http\n', FILE);
  assert.equal(state?.diagnostics[0]?.candidate_id, null);
  assert.ok((state?.diagnostics.length ?? 0) >= 1);
});
