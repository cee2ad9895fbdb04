// Bad input on EVERY registered route (from the app's own route table) gets a 4xx problem, never a 500, a crash
// or a hang: oversized bodies, malformed JSON, wrong JSON types, unknown fields, very long strings, long ids and
// long query values. The server is still healthy afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteInfo } from '../../src/server/app.js';
import { applicationRoutes } from '../support/app.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let routes: RouteInfo[];
before(async () => {
  routes = (await applicationRoutes()).filter((r) => r.timeout !== false);
  server = await startTestServer();
  await server.request('POST', '/namespaces', { body: { name: 'bad-input' } });
});
after(async () => {
  await server.close();
});

const fill = (url: string, id: string) => url.replace(/:[A-Za-z_]+/g, id).replace(/\*/g, 'x');
const LONG = 'a'.repeat(100_000);

function assertClientError(status: number, what: string, text: string): void {
  assert.ok(status >= 400 && status < 500, `${what}: expected 4xx, got ${status} ${text.slice(0, 300)}`);
}

test('bodies: oversized, malformed, wrong types, unknown fields and very long strings are 4xx', async () => {
  const bodyRoutes = routes.filter((r) => (r.method === 'POST' || r.method === 'PUT') && r.url !== '/logout');
  assert.ok(bodyRoutes.length >= 8);
  const oversized = JSON.stringify({ value: 'x'.repeat(3 * 1024 * 1024) });
  const cases: [string, string, Record<string, string>?][] = [
    ['oversized', oversized],
    ['invalid JSON', '{"name": '],
    ['array', '[]'],
    ['string', '"name"'],
    ['number', '42'],
    ['null', 'null'],
    ['deep nesting', '['.repeat(5000) + ']'.repeat(5000)],
    ['unknown field', JSON.stringify({ definitely_not_a_field: true })],
    ['wrong types', JSON.stringify({ name: 1, username: [], password: {}, scopes: 'admin', namespace: 5, value: false, url: 1, data: 2, deployment_id: 3 })],
    ['long strings', JSON.stringify({ name: LONG, username: LONG, password: LONG, namespace: LONG, value: 'v', data: LONG, url: LONG, scopes: [LONG], labels: LONG })],
    ['proto pollution', '{"__proto__": {"admin": true}}'],
    ['text/plain', 'name=x', { 'content-type': 'text/plain' }],
    ['form', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' }],
  ];
  for (const route of bodyRoutes) {
    const path = fill(route.url, '00000000-0000-0000-0000-000000000000');
    for (const [label, body, headers] of cases) {
      const response = await server.request(route.method, path, { body, headers: headers ?? {} });
      assertClientError(response.status, `${route.method} ${route.url} ${label}`, response.text);
      if (response.status !== 404) {
        assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/, `${route.method} ${route.url} ${label}`);
      }
    }
  }
});

test('paths and queries: very long ids, odd characters and long or repeated query values are 4xx', async () => {
  const idRoutes = routes.filter((r) => r.url.includes(':'));
  for (const route of idRoutes) {
    for (const id of ['x'.repeat(300), 'x'.repeat(65), '%00', '..%2F..%2Fetc', '%F0%9F%98%80', "'; DROP TABLE users; --"]) {
      const path = fill(route.url, id);
      const body = route.method === 'POST' || route.method === 'PUT' ? {} : undefined;
      const response = await server.request(route.method, path, { body });
      assertClientError(response.status, `${route.method} ${path.slice(0, 80)}`, response.text);
    }
  }
  for (const route of routes.filter((r) => r.method === 'GET' && !r.url.includes(':') && r.url !== '/healthz' && r.url !== '/metrics')) {
    for (const query of [`namespace=${'n'.repeat(300)}`, `namespace=${'&namespace=a'.repeat(200)}`, 'namespace[]=', 'force=maybe&status=zzz&limit=-1']) {
      const response = await server.request('GET', `${route.url}?${query}`);
      assert.ok(response.status < 500, `GET ${route.url}?${query.slice(0, 40)}: ${response.status} ${response.text.slice(0, 200)}`);
    }
  }
  for (const route of routes.filter((r) => r.method === 'DELETE')) {
    const response = await server.request('DELETE', `${fill(route.url, '00000000-0000-0000-0000-000000000000')}?force=maybe`);
    assertClientError(response.status, `DELETE ${route.url}?force=maybe`, response.text);
  }
});

test('huge headers and a huge Authorization are refused cleanly; the server stays healthy', async () => {
  const hugeAuth = await server.request('GET', '/users', { token: null, headers: { authorization: 'Bearer ' + 'a'.repeat(6000) } });
  assert.equal(hugeAuth.status, 401);
  const tooBig = await fetch(`${server.baseUrl}/users`, { headers: { 'x-filler': 'f'.repeat(20_000) } }).then(
    (r) => r.status,
    () => 431,
  );
  assert.equal(tooBig, 431);
  assert.deepEqual((await server.request('GET', '/healthz', { token: null })).body, { state: 'UP' });
  assert.equal((await server.request('GET', '/users/me')).status, 200);
});
