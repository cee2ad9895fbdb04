import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/server.js';
import { insertDeployment, type Problem } from './resources-support.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
  assert.equal((await server.request('POST', '/namespaces', { body: { name: 'prod' } })).status, 201);
});
after(async () => {
  await server?.close();
});

test('create answers the short form; GET by id is the full Volume; defaults; list filter', async () => {
  const created = await server.request<Record<string, unknown>>('POST', '/volumes', {
    body: { namespace: 'prod', name: 'pg-data', backend_type: 'directory', size: 1073741824, labels: { team: 'db' } },
  });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['backend_type', 'created_at', 'id', 'name', 'namespace']);
  assert.equal(created.body.backend_type, 'directory');
  const full = await server.request<Record<string, unknown>>('GET', `/volumes/${String(created.body.id)}`);
  assert.equal(full.status, 200);
  assert.deepEqual(full.body, { ...created.body, updated_at: null, size: 1073741824, labels: { team: 'db' } });

  const defaults = await server.request<{ id: string; backend_type: string }>('POST', '/volumes', { body: { namespace: 'prod', name: 'cache' } });
  assert.equal(defaults.status, 201);
  assert.equal(defaults.body.backend_type, 'local');
  const defaultFull = await server.request<Record<string, unknown>>('GET', `/volumes/${defaults.body.id}`);
  assert.equal(defaultFull.body.size, null);
  assert.deepEqual(defaultFull.body.labels, {});
  const explicitNulls = await server.request('POST', '/volumes', { body: { namespace: 'prod', name: 'nulls', backend_type: null, size: null, labels: null } });
  assert.equal(explicitNulls.status, 201);

  const list = await server.request<Array<{ name: string }>>('GET', '/volumes?namespace=prod');
  assert.deepEqual(list.body.map((v) => v.name), ['cache', 'nulls', 'pg-data']);
  assert.deepEqual((await server.request<unknown[]>('GET', '/volumes?namespace[]=other')).body, []);
});

test('backend_type other than local/directory is a plain 422; 404 namespace; 409 duplicate', async () => {
  const bad = await server.request<Problem>('POST', '/volumes', { body: { namespace: 'prod', name: 'nfs-vol', backend_type: 'nfs' } });
  assert.equal(bad.status, 422);
  assert.match(bad.headers.get('content-type') ?? '', /problem\+json/);
  assert.deepEqual(bad.body.violations, []);
  assert.match(bad.body.detail, /local, directory/);
  const missing = await server.request('POST', '/volumes', { body: { namespace: 'nowhere', name: 'data' } });
  assert.equal(missing.status, 404);
  assert.equal((await server.request<unknown[]>('GET', '/namespaces')).body.length, 1, 'namespace not auto-created');
  assert.equal((await server.request('POST', '/volumes', { body: { namespace: 'prod', name: 'dup' } })).status, 201);
  assert.equal((await server.request('POST', '/volumes', { body: { namespace: 'prod', name: 'dup', backend_type: 'directory' } })).status, 409);
  const negative = await server.request('POST', '/volumes', { body: { namespace: 'prod', name: 'neg', size: -1 } });
  assert.equal(negative.status, 422);
  assert.equal((await server.request('GET', `/volumes/${randomUUID()}`)).status, 404);
  assert.equal((await server.request('DELETE', `/volumes/${randomUUID()}`)).status, 404);
});

test('volume violation codes', async () => {
  const cases: Array<[Record<string, unknown>, string[]]> = [
    [{ namespace: 'p', name: 'data' }, ['volume.namespace.length']],
    [{ namespace: 'PROD', name: 'data' }, ['volume.namespace.format']],
    [{ namespace: 'prod', name: 'd' }, ['volume.name.length']],
    [{ namespace: 'prod', name: 'd'.repeat(254) }, ['volume.name.length']],
    [{ namespace: 'prod', name: 'Data' }, ['volume.name.format']],
    [{ namespace: 'prod', name: 'data-' }, ['volume.name.format']],
    [{ namespace: 'x', name: '_' }, ['volume.name.format', 'volume.name.length', 'volume.namespace.length']],
  ];
  for (const [body, codes] of cases) {
    const response = await server.request<Problem>('POST', '/volumes', { body });
    assert.equal(response.status, 422, JSON.stringify(body).slice(0, 80));
    assert.deepEqual(response.body.violations.map((v) => v.code).sort(), codes, JSON.stringify(body).slice(0, 80));
  }
});

test('bad volume bodies are 4xx', async () => {
  const bodies: unknown[] = [
    { namespace: 'prod', name: 'v1', size: 1.5 },
    { namespace: 'prod', name: 'v1', size: '10' },
    { namespace: 'prod', name: 'v1', size: 2 ** 60 },
    { namespace: 'prod', name: 'v1', labels: ['a'] },
    { namespace: 'prod', name: 'v1', labels: { a: 1 } },
    { namespace: 'prod', name: 'v1', labels: { a: 'v'.repeat(2000) } },
    { namespace: 'prod', name: 'v1', backend_type: 1 },
    { namespace: 'prod', name: 'v1', driver: 'local' },
    { namespace: 'prod' },
    '{"namespace":"prod","name":"v1","labels":{"__proto__":{"x":"y"}}}',
    '{"namespace":"prod","name":"v1","labels":{"a":"\\udfff"}}',
  ];
  for (const body of bodies) {
    const response = await server.request('POST', '/volumes', { body });
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body).slice(0, 80)} -> ${response.status} ${response.text.slice(0, 120)}`);
  }
  assert.equal((await server.request('GET', `/volumes/${'x'.repeat(100)}`)).status, 400);
});

test('delete of a mounted volume: 409 legacy body, force deletes', async () => {
  const created = await server.request<{ id: string }>('POST', '/volumes', { body: { namespace: 'prod', name: 'shared' } });
  const mount = { type: 'volume', source: 'shared', destination: '/d', driver: 'local', permission: 'rw' };
  insertDeployment(server.dbPath, 'prod', 'db', 'running', { volumes: [mount] });
  insertDeployment(server.dbPath, 'prod', 'crashed', 'crash_loop_back_off', { volumes: [mount] });
  insertDeployment(server.dbPath, 'prod', 'binder', 'running', { volumes: [{ ...mount, type: 'bind' }] });
  const refused = await server.request<{ error: string; deployments: string[]; hint: string }>('DELETE', `/volumes/${created.body.id}`);
  assert.equal(refused.status, 409);
  assert.match(refused.headers.get('content-type') ?? '', /^application\/json/);
  assert.deepEqual(Object.keys(refused.body).sort(), ['deployments', 'error', 'hint']);
  assert.deepEqual(refused.body.deployments, ['prod/db']);
  assert.match(refused.body.error, /volume 'shared'/);
  assert.equal((await server.request('DELETE', `/volumes/${created.body.id}?force=true`)).status, 204);
  assert.equal((await server.request('GET', `/volumes/${created.body.id}`)).status, 404);
});
