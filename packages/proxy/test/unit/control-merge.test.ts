import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mergeSources } from '../../src/control/merge.js';
import { defaultEntrypointConfig, type Entrypoint, type Source } from '../../src/model/entrypoint.js';

function ep(name: string, source: Source, port = 80): Entrypoint {
  return { id: `http_${name}`, name, protocol: 'Http', source, backends: [{ address: '10.0.0.1', port, weight: 100 }], config: defaultEntrypointConfig() };
}

test('sources are merged into one set sorted by id', () => {
  const result = mergeSources(new Map<Source, Entrypoint[]>([['config', [ep('b', 'config')]], ['api', [ep('c', 'api')]], ['http', [ep('a', 'http')]]]));
  assert.deepEqual(result.entrypoints.map((e) => `${e.id}:${e.source}`), ['http_a:http', 'http_b:config', 'http_c:api']);
  assert.deepEqual(result.diagnostics, []);
});

test('on an id conflict the API wins over providers and a W002 names both sources', () => {
  const result = mergeSources(new Map<Source, Entrypoint[]>([['config', [ep('web', 'config', 81)]], ['api', [ep('web', 'api', 82)]]]));
  assert.equal(result.entrypoints.length, 1);
  assert.equal(result.entrypoints[0]?.source, 'api');
  assert.equal(result.entrypoints[0]?.backends[0]?.port, 82);
  assert.equal(result.diagnostics.length, 1);
  const d = result.diagnostics[0];
  assert.equal(d?.candidate_id, 'http_web');
  assert.equal(d?.diagnostic.code, 'W002');
  assert.match(d?.diagnostic.message ?? '', /sources "api" and "config"; the definition from "api" is used/);
});

test('provider precedence: config, then http, then container platforms', () => {
  const result = mergeSources(new Map<Source, Entrypoint[]>([['docker', [ep('x', 'docker')]], ['http', [ep('x', 'http')]], ['config', [ep('x', 'config')]]]));
  assert.equal(result.entrypoints[0]?.source, 'config');
  assert.equal(result.diagnostics.length, 2);
  assert.ok(result.diagnostics.every((d) => d.diagnostic.code === 'W002' && d.diagnostic.message.includes('"config"')));
});

test('a duplicate inside one source keeps the first and raises W003', () => {
  const result = mergeSources(new Map<Source, Entrypoint[]>([['config', [ep('x', 'config', 1), ep('x', 'config', 2)]]]));
  assert.equal(result.entrypoints.length, 1);
  assert.equal(result.entrypoints[0]?.backends[0]?.port, 1);
  assert.equal(result.diagnostics[0]?.diagnostic.code, 'W003');
});
