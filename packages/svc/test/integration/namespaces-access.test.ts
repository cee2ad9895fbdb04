// Authorisation of the resource routes: every route needs its scope (403 without it), and a
// namespace-restricted token never sees or touches another namespace (403 on the loaded resource's namespace).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const ids: Record<string, string> = {};

const ALL_RESOURCE_SCOPES = [
  'namespaces:read',
  'namespaces:write',
  'secrets:read',
  'secrets:write',
  'volumes:read',
  'volumes:write',
  'configs:read',
  'configs:write',
  'webhooks:read',
  'webhooks:write',
];

async function created(path: string, body: unknown): Promise<string> {
  const response = await server.request<{ id: string }>('POST', path, { body });
  assert.equal(response.status, 201, `${path} ${response.text}`);
  return response.body.id;
}

before(async () => {
  server = await startTestServer();
  for (const ns of ['team-a', 'team-b']) {
    ids[`ns:${ns}`] = await created('/namespaces', { name: ns });
    ids[`secret:${ns}`] = await created('/secrets', { namespace: ns, name: 'pw', value: 'v' });
    ids[`volume:${ns}`] = await created('/volumes', { namespace: ns, name: 'data' });
    ids[`config:${ns}`] = await created('/configs', { namespace: ns, name: 'app', data: '{}' });
  }
  ids.webhook = await created('/webhooks', { url: 'http://10.0.0.1/' });
});
after(async () => {
  await server?.close();
});

test('every resource route answers 403 to a token without its scope', async () => {
  const id = randomUUID();
  const routes: Array<[string, string, string, unknown?]> = [
    ['GET', '/namespaces', 'namespaces:read'],
    ['GET', `/namespaces/${id}`, 'namespaces:read'],
    ['POST', '/namespaces', 'namespaces:write', { name: 'zz' }],
    ['GET', '/secrets', 'secrets:read'],
    ['GET', `/secrets/${id}`, 'secrets:read'],
    ['POST', '/secrets', 'secrets:write', { namespace: 'team-a', name: 'x1', value: 'v' }],
    ['DELETE', `/secrets/${id}`, 'secrets:write'],
    ['GET', '/volumes', 'volumes:read'],
    ['GET', `/volumes/${id}`, 'volumes:read'],
    ['POST', '/volumes', 'volumes:write', { namespace: 'team-a', name: 'x1' }],
    ['DELETE', `/volumes/${id}`, 'volumes:write'],
    ['GET', '/configs', 'configs:read'],
    ['GET', `/configs/${id}`, 'configs:read'],
    ['POST', '/configs', 'configs:write', { namespace: 'team-a', name: 'x1', data: 'x' }],
    ['PUT', `/configs/${id}`, 'configs:write', { name: 'x1', data: '{}', labels: '' }],
    ['DELETE', `/configs/${id}`, 'configs:write'],
    ['GET', '/webhooks', 'webhooks:read'],
    ['POST', '/webhooks', 'webhooks:write', { url: 'http://10.0.0.1/' }],
    ['DELETE', `/webhooks/${id}`, 'webhooks:write'],
  ];
  // One token holding every resource scope except the route's own: proves the exact scope is required.
  const tokens = new Map<string, string>();
  for (const scope of new Set(routes.map((r) => r[2]))) {
    tokens.set(scope, (await server.createToken({ scopes: ALL_RESOURCE_SCOPES.filter((s) => s !== scope) })).token);
  }
  const withScope = (await server.createToken({ scopes: ALL_RESOURCE_SCOPES })).token;
  for (const [method, path, scope, body] of routes) {
    const denied = await server.request(method, path, { token: tokens.get(scope) ?? '', body });
    assert.equal(denied.status, 403, `${method} ${path} without ${scope}`);
    const allowed = await server.request(method, path, { token: withScope, body });
    assert.notEqual(allowed.status, 403, `${method} ${path} with ${scope}`);
    assert.notEqual(allowed.status, 401);
    const anonymous = await server.request(method, path, { token: null, body });
    assert.equal(anonymous.status, 401, `${method} ${path} without a token`);
  }
});

test('a namespace-restricted token sees only its namespaces and gets 403 on others', async () => {
  const token = (await server.createToken({ scopes: ALL_RESOURCE_SCOPES, namespaces: ['team-a'] })).token;
  const as = { token };

  const namespaces = await server.request<Array<{ name: string }>>('GET', '/namespaces', as);
  assert.deepEqual(namespaces.body.map((n) => n.name), ['team-a']);
  assert.equal((await server.request('GET', `/namespaces/${ids['ns:team-a']}`, as)).status, 200);
  assert.equal((await server.request('GET', `/namespaces/${ids['ns:team-b']}`, as)).status, 403);
  assert.equal((await server.request('POST', '/namespaces', { ...as, body: { name: 'team-c' } })).status, 403);

  for (const kind of ['secrets', 'volumes', 'configs']) {
    const list = await server.request<Array<{ namespace: string }>>('GET', `/${kind}`, as);
    assert.equal(list.status, 200);
    assert.deepEqual([...new Set(list.body.map((r) => r.namespace))], ['team-a'], kind);
    assert.equal((await server.request('GET', `/${kind}?namespace=team-a`, as)).status, 200);
    assert.equal((await server.request('GET', `/${kind}?namespace=team-b`, as)).status, 403, `${kind} filter on another namespace`);
    assert.equal((await server.request('GET', `/${kind}?namespace[]=team-a&namespace[]=team-b`, as)).status, 403);
    const singular = kind.slice(0, -1);
    assert.equal((await server.request('GET', `/${kind}/${ids[`${singular}:team-a`]}`, as)).status, 200);
    assert.equal((await server.request('GET', `/${kind}/${ids[`${singular}:team-b`]}`, as)).status, 403, `${kind} read by id`);
    assert.equal((await server.request('DELETE', `/${kind}/${ids[`${singular}:team-b`]}?force=true`, as)).status, 403, `${kind} delete by id`);
    assert.equal((await server.request('GET', `/${kind}/${ids[`${singular}:team-b`]}`)).status, 200, `${kind} in team-b untouched`);
  }
  assert.equal((await server.request('POST', '/secrets', { ...as, body: { namespace: 'team-b', name: 'sneaky', value: 'v' } })).status, 403);
  assert.equal((await server.request('POST', '/volumes', { ...as, body: { namespace: 'team-b', name: 'sneaky' } })).status, 403);
  assert.equal((await server.request('POST', '/configs', { ...as, body: { namespace: 'team-b', name: 'sneaky', data: 'x' } })).status, 403);
  assert.equal(
    (await server.request('PUT', `/configs/${ids['config:team-b']}`, { ...as, body: { name: 'app', data: '{"changed":1}', labels: '' } })).status,
    403,
  );
  assert.equal((await server.request<{ data: string }>('GET', `/configs/${ids['config:team-b']}`)).body.data, '{}');
  assert.equal((await server.request('POST', '/secrets', { ...as, body: { namespace: 'team-a', name: 'mine', value: 'v' } })).status, 201);

  // Webhooks span every namespace, so a restricted token cannot manage them.
  assert.equal((await server.request('GET', '/webhooks', as)).status, 403);
  assert.equal((await server.request('POST', '/webhooks', { ...as, body: { url: 'http://10.0.0.1/' } })).status, 403);
  assert.equal((await server.request('DELETE', `/webhooks/${ids.webhook}`, as)).status, 403);
  const hooks = await server.request<Array<{ id: string; revoked_at: string | null }>>('GET', '/webhooks');
  assert.equal(hooks.body.find((w) => w.id === ids.webhook)?.revoked_at, null);
});
