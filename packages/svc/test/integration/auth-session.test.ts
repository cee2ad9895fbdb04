// Login, logout, sessions and the bearer-token rules (spec "Authentication" 1-5), against the real server process.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

test('login mints an independent session token of the svc_pat_ form', async () => {
  const first = await server.login('admin', server.adminPassword);
  const second = await server.login('admin', server.adminPassword);
  assert.match(first, /^svc_pat_[0-9a-f]{64}$/);
  assert.notEqual(first, second);
  const me = await server.request<{ username: string; status: string; login_at: string }>('GET', '/users/me', { token: first });
  assert.equal(me.status, 200);
  assert.equal(me.body.username, 'admin');
  assert.equal(me.body.status, 'active');
  assert.ok(me.body.login_at);
});

test('unknown user and wrong password get the identical 401', async () => {
  const unknown = await server.request('POST', '/login', { token: null, body: { username: 'nobody', password: 'whatever-1' } });
  const wrong = await server.request('POST', '/login', { token: null, body: { username: 'admin', password: 'wrong-password' } });
  assert.equal(unknown.status, 401);
  assert.equal(wrong.status, 401);
  assert.equal(unknown.text, wrong.text);
  assert.equal(unknown.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.deepEqual(unknown.body, { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'invalid credentials', violations: [] });
});

test('login with a malformed body is 400, never 500', async () => {
  for (const body of ['{not json', '[]', '{}', JSON.stringify({ username: 'admin' }), JSON.stringify({ username: 1, password: 'x' }), JSON.stringify({ username: 'admin', password: 'x', extra: 1 })]) {
    const response = await server.request('POST', '/login', { token: null, body });
    assert.equal(response.status, 400, body);
  }
});

test('logout revokes only the presented session and always answers 204', async () => {
  const keep = await server.login('admin', server.adminPassword);
  const drop = await server.login('admin', server.adminPassword);
  assert.equal((await server.request('POST', '/logout', { token: drop })).status, 204);
  assert.equal((await server.request('GET', '/users/me', { token: drop })).status, 401);
  assert.equal((await server.request('GET', '/users/me', { token: keep })).status, 200);
  assert.equal((await server.request('POST', '/logout', { token: drop })).status, 204);
  assert.equal((await server.request('POST', '/logout', { token: 'svc_pat_' + '0'.repeat(64) })).status, 204);
  assert.equal((await server.request('POST', '/logout', { token: null })).status, 204);
});

test('missing, malformed and unknown bearer tokens are 401', async () => {
  const missing = await server.request('GET', '/users', { token: null });
  assert.equal(missing.status, 401);
  assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="svc"');
  assert.equal((await server.request('GET', '/users', { token: 'garbage' })).status, 401);
  assert.equal((await server.request('GET', '/users', { token: 'svc_pat_' + 'a'.repeat(64) })).status, 401);
  assert.equal((await server.request('GET', '/users', { headers: { authorization: `Basic ${server.adminToken}` }, token: null })).status, 401);
  assert.equal((await server.request('GET', '/users', { headers: { authorization: 'Bearer ' + 'x'.repeat(10_000) }, token: null })).status, 401);
});

test('public routes need no token; unknown paths are 404', async () => {
  assert.deepEqual((await server.request('GET', '/healthz', { token: null })).body, { state: 'UP' });
  assert.equal((await server.request('GET', '/metrics', { token: null })).status, 200);
  assert.equal((await server.request('GET', '/no/such/route', { token: null })).status, 404);
});

test('a login flood gets 401s and quick 503s (Retry-After), never 500, and the server keeps serving', async () => {
  // On a heavily loaded machine a queued check can still pass the 10 s handler limit: 408 is a fair answer too.
  const attempts = await Promise.all(
    Array.from({ length: 150 }, (_, i) =>
      server.request('POST', '/login', { token: null, body: { username: i % 2 ? 'admin' : 'nobody', password: 'wrong-password' } }),
    ),
  );
  const unexpected = attempts.filter((a) => a.status !== 401 && a.status !== 503 && a.status !== 408);
  assert.deepEqual(unexpected.map((a) => `${a.status} ${a.text.slice(0, 200)}`), []);
  const busy = attempts.find((a) => a.status === 503);
  assert.ok(busy, 'some attempts beyond the waiting room are refused at once');
  assert.equal(busy.headers.get('retry-after'), '1');
  assert.equal((await server.request('GET', '/users/me')).status, 200);
  assert.ok(await server.login('admin', server.adminPassword));
});
