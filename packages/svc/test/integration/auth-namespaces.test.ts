// A namespace-restricted PAT never sees or touches another namespace (spec "Authentication" 8): the check uses
// the loaded resource's real namespace, and lists return only the token's namespaces.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { SCOPES } from '../../src/api/context.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let restricted: string;
const ids: Record<string, Record<'a' | 'b', string>> = { secrets: { a: '', b: '' }, volumes: { a: '', b: '' }, configs: { a: '', b: '' }, namespaces: { a: '', b: '' } };
let deploymentB = '';
let deploymentA = '';

async function created(path: string, body: unknown): Promise<string> {
  const response = await server.request<{ id: string }>('POST', path, { body });
  assert.equal(response.status, 201, `${path}: ${response.text}`);
  return response.body.id;
}

before(async () => {
  server = await startTestServer();
  for (const side of ['a', 'b'] as const) {
    const ns = `ns-${side}`;
    ids.namespaces![side] = await created('/namespaces', { name: ns });
    ids.secrets![side] = await created('/secrets', { namespace: ns, name: `secret-${side}`, value: `value-${side}` });
    ids.volumes![side] = await created('/volumes', { namespace: ns, name: `volume-${side}` });
    ids.configs![side] = await created('/configs', { namespace: ns, name: `config-${side}`, data: '{}' });
  }
  // Deployments have no route in this area: insert rows directly (WAL allows a second connection).
  const db = new Database(server.dbPath);
  const insert = db.prepare(
    "INSERT INTO deployments (id, namespace, name, kind, runtime, status, spec, created_at, updated_at) VALUES (?, ?, ?, 'worker', 'docker', 'pending', '{}', ?, ?)",
  );
  deploymentA = randomUUID();
  deploymentB = randomUUID();
  const now = new Date().toISOString();
  insert.run(deploymentA, 'ns-a', 'web', now, now);
  insert.run(deploymentB, 'ns-b', 'web', now, now);
  db.close();
  restricted = (await server.createToken({ scopes: [...SCOPES], namespaces: ['ns-a'] })).token;
});
after(async () => {
  await server.close();
});

test('lists return only the token\'s namespaces', async () => {
  const namespaces = await server.request<{ name: string }[]>('GET', '/namespaces', { token: restricted });
  assert.deepEqual(namespaces.body.map((n) => n.name), ['ns-a']);
  for (const path of ['/secrets', '/volumes', '/configs']) {
    const list = await server.request<{ namespace: string }[]>('GET', path, { token: restricted });
    assert.equal(list.status, 200, path);
    assert.ok(list.body.length >= 1, path);
    assert.ok(list.body.every((item) => item.namespace === 'ns-a'), `${path}: ${list.text}`);
    assert.equal((await server.request('GET', `${path}?namespace=ns-b`, { token: restricted })).status, 403, `${path}?namespace=ns-b`);
    assert.equal((await server.request('GET', `${path}?namespace[]=ns-a&namespace[]=ns-b`, { token: restricted })).status, 403);
    const own = await server.request<unknown[]>('GET', `${path}?namespace=ns-a`, { token: restricted });
    assert.equal(own.status, 200);
  }
});

test('reading, changing or deleting another namespace\'s resource by id is 403 and changes nothing', async () => {
  for (const kind of ['secrets', 'volumes', 'configs', 'namespaces'] as const) {
    assert.equal((await server.request('GET', `/${kind}/${ids[kind]!.b}`, { token: restricted })).status, 403, `GET ${kind}`);
    assert.equal((await server.request('GET', `/${kind}/${ids[kind]!.a}`, { token: restricted })).status, 200, `GET own ${kind}`);
  }
  for (const kind of ['secrets', 'volumes', 'configs'] as const) {
    assert.equal((await server.request('DELETE', `/${kind}/${ids[kind]!.b}?force=true`, { token: restricted })).status, 403, `DELETE ${kind}`);
    assert.equal((await server.request('GET', `/${kind}/${ids[kind]!.b}`)).status, 200, `${kind} in ns-b still exists`);
  }
  const put = await server.request('PUT', `/configs/${ids.configs!.b}`, { token: restricted, body: { name: 'config-b', data: '{"x":1}', labels: '' } });
  assert.equal(put.status, 403);
  const config = await server.request<{ data: string }>('GET', `/configs/${ids.configs!.b}`);
  assert.equal(config.body.data, '{}');
});

test('creating in another namespace is 403 and creates nothing', async () => {
  const attempts: [string, unknown][] = [
    ['/secrets', { namespace: 'ns-b', name: 'sneaky', value: 'x' }],
    ['/volumes', { namespace: 'ns-b', name: 'sneaky' }],
    ['/configs', { namespace: 'ns-b', name: 'sneaky', data: '{}' }],
    ['/namespaces', { name: 'ns-c' }],
  ];
  for (const [path, body] of attempts) {
    assert.equal((await server.request('POST', path, { token: restricted, body })).status, 403, path);
  }
  for (const path of ['/secrets', '/volumes', '/configs']) {
    const all = await server.request<{ name: string }[]>('GET', path);
    assert.ok(!all.body.some((item) => item.name === 'sneaky'), path);
  }
  const namespaces = await server.request<{ name: string }[]>('GET', '/namespaces');
  assert.ok(!namespaces.body.some((n) => n.name === 'ns-c'));
});

test('stream tickets check the deployment\'s real namespace', async () => {
  const other = await server.request('POST', '/auth/stream-ticket', { token: restricted, body: { deployment_id: deploymentB, stream: 'logs' } });
  assert.equal(other.status, 403);
  const own = await server.request<{ ticket: string; expires_in: number }>('POST', '/auth/stream-ticket', {
    token: restricted,
    body: { deployment_id: deploymentA, stream: 'exec' },
  });
  assert.equal(own.status, 200);
  assert.match(own.body.ticket, /^svc_st_[0-9a-f]{64}$/);
  assert.equal(own.body.expires_in, 30);
  assert.equal((await server.request('POST', '/auth/stream-ticket', { body: { deployment_id: randomUUID(), stream: 'logs' } })).status, 404);
  assert.equal((await server.request('POST', '/auth/stream-ticket', { body: { deployment_id: deploymentA, stream: 'shell' } })).status, 400);
  const nonAdmin = (await server.createToken({ scopes: SCOPES.filter((s) => s !== 'admin') })).token;
  assert.equal((await server.request('POST', '/auth/stream-ticket', { token: nonAdmin, body: { deployment_id: deploymentA, stream: 'logs' } })).status, 403);
});
