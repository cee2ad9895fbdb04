// Tokens over HTTP against the real server: shape, violation codes, ownership, expiry, revocation, rotation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer } from '../support/server.js';

interface Problem {
  status: number;
  violations: { property_path: string; code: string }[];
}
interface Token {
  id: string;
  name: string;
  token?: string;
  token_prefix: string;
  scopes: string[];
  namespaces: string[];
  created_at: string;
  expire_at: string | null;
  last_used_at?: string | null;
  revoked_at: string | null;
  message?: string;
}

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

test('POST /tokens answers 201 with the clear token once, its prefix and a message', async () => {
  const created = await server.request<Token>('POST', '/tokens', {
    body: { name: 'ci', scopes: ['secrets:read', 'namespaces:read'], namespaces: ['prod'], expire_at: '2099-01-01T00:00:00Z' },
  });
  assert.equal(created.status, 201);
  const body = created.body;
  assert.match(body.token ?? '', /^svc_pat_[0-9a-f]{64}$/);
  assert.equal(body.token_prefix, body.token?.slice(0, 12));
  assert.deepEqual(body.scopes, ['secrets:read', 'namespaces:read']);
  assert.deepEqual(body.namespaces, ['prod']);
  assert.equal(body.expire_at, '2099-01-01T00:00:00.000Z');
  assert.equal(body.revoked_at, null);
  assert.ok(body.message && /once/.test(body.message));
  const fetched = await server.request<Token>('GET', `/tokens/${body.id}`);
  assert.equal(fetched.status, 200);
  assert.equal(fetched.body.token, undefined);
  assert.equal(fetched.body.message, undefined);
  assert.equal(fetched.body.token_prefix, body.token_prefix);
  assert.ok(!fetched.text.includes(body.token ?? 'x'));
});

test('every token violation code', async () => {
  const all = await server.request<Problem>('POST', '/tokens', { body: { name: '_', scopes: [], expire_at: 'next week' } });
  assert.equal(all.status, 422);
  assert.deepEqual(all.body.violations.map((v) => v.code).sort(), ['token.expire_at.format', 'token.name.format', 'token.name.length', 'token.scopes.empty']);
  const unknown = await server.request<Problem>('POST', '/tokens', { body: { name: 'ok-name', scopes: ['admin', 'root'] } });
  assert.deepEqual(unknown.body.violations, [{ property_path: 'scopes[1]', message: "unknown scope 'root'", code: 'token.scopes.unknown' }]);
  const long = await server.request<Problem>('POST', '/tokens', { body: { name: 'a'.repeat(64), scopes: ['admin'] } });
  assert.deepEqual(long.body.violations.map((v) => v.code), ['token.name.length']);
  const past = await server.request<Problem>('POST', '/tokens', { body: { name: 'old', scopes: ['admin'], expire_at: '2001-01-01T00:00:00Z' } });
  assert.deepEqual(past.body.violations.map((v) => v.code), ['token.expire_at.format']);
  // Structural problems are 400.
  for (const body of [{ scopes: ['admin'] }, { name: 'x1', scopes: 'admin' }, { name: 'x1', scopes: ['admin'], expires_at: null }, { name: 'x1', scopes: [1] }]) {
    assert.equal((await server.request('POST', '/tokens', { body })).status, 400, JSON.stringify(body));
  }
});

test('GET /tokens lists only the caller\'s PATs, never sessions, with last_used_at', async () => {
  const used = await server.createToken({ scopes: ['users:read'] });
  assert.equal((await server.request('GET', '/users', { token: used.token })).status, 200);
  const list = await server.request<Token[]>('GET', '/tokens');
  assert.equal(list.status, 200);
  const entry = list.body.find((t) => t.id === used.id);
  assert.ok(entry);
  assert.ok(entry.last_used_at, 'last_used_at is set after use');
  assert.ok(list.body.every((t) => t.name !== 'session' && t.token === undefined));
  // Another user sees none of admin's tokens, and gets 404 on them.
  await server.request('POST', '/users', { body: { username: 'frank', password: 'frank-password' } });
  const frank = await server.login('frank', 'frank-password');
  assert.deepEqual((await server.request<Token[]>('GET', '/tokens', { token: frank })).body, []);
  assert.equal((await server.request('GET', `/tokens/${used.id}`, { token: frank })).status, 404);
  assert.equal((await server.request('DELETE', `/tokens/${used.id}`, { token: frank })).status, 404);
  assert.equal((await server.request('POST', `/tokens/${used.id}/rotate`, { token: frank })).status, 404);
  assert.equal((await server.request('GET', '/users', { token: used.token })).status, 200, 'still valid after the failed attempts');
});

test('a session cannot be managed by id', async () => {
  // The API never shows a session's id; read it from the database file to prove the routes refuse it anyway.
  const db = new Database(server.dbPath, { readonly: true });
  const row = db.prepare("SELECT id FROM tokens WHERE kind = 'session' LIMIT 1").get() as { id: string } | undefined;
  db.close();
  assert.ok(row);
  assert.equal((await server.request('GET', `/tokens/${row.id}`)).status, 404);
  assert.equal((await server.request('POST', `/tokens/${row.id}/rotate`)).status, 404);
  assert.equal((await server.request('DELETE', `/tokens/${row.id}`)).status, 404);
  assert.equal((await server.request('GET', '/users/me')).status, 200, 'the admin session still works');
  assert.equal((await server.request('GET', '/tokens/00000000-0000-0000-0000-000000000000')).status, 404);
});

test('DELETE /tokens/{id} revokes: 204, then 401 on use, revoked_at set and kept', async () => {
  const pat = await server.createToken({ scopes: ['users:read'] });
  assert.equal((await server.request('GET', '/users', { token: pat.token })).status, 200);
  assert.equal((await server.request('DELETE', `/tokens/${pat.id}`)).status, 204);
  assert.equal((await server.request('GET', '/users', { token: pat.token })).status, 401);
  const first = (await server.request<Token>('GET', `/tokens/${pat.id}`)).body.revoked_at;
  assert.ok(first);
  assert.equal((await server.request('DELETE', `/tokens/${pat.id}`)).status, 204);
  assert.equal((await server.request<Token>('GET', `/tokens/${pat.id}`)).body.revoked_at, first);
  assert.equal((await server.request('POST', `/tokens/${pat.id}/rotate`)).status, 409);
});

test('rotation: 201, new token keeps name, scopes, namespaces, expiry; old one is revoked', async () => {
  const original = await server.createToken({ name: 'rotate-me', scopes: ['secrets:read'], namespaces: ['team-a'], expire_at: '2098-05-05T05:05:05Z' });
  const rotated = await server.request<Token>('POST', `/tokens/${original.id}/rotate`);
  assert.equal(rotated.status, 201);
  assert.notEqual(rotated.body.id, original.id);
  assert.notEqual(rotated.body.token, original.token);
  assert.deepEqual(
    [rotated.body.name, rotated.body.scopes, rotated.body.namespaces, rotated.body.expire_at],
    ['rotate-me', ['secrets:read'], ['team-a'], '2098-05-05T05:05:05.000Z'],
  );
  assert.ok(rotated.body.message);
  assert.equal((await server.request('GET', '/users/me', { token: original.token })).status, 401);
  assert.equal((await server.request('GET', '/users/me', { token: rotated.body.token ?? null })).status, 200);
  assert.ok((await server.request<Token>('GET', `/tokens/${original.id}`)).body.revoked_at);
  assert.equal((await server.request('POST', `/tokens/${original.id}/rotate`, { body: { name: 'x' } })).status, 400);
});

test('an expired token is 401', async () => {
  const soon = new Date(Date.now() + 1500).toISOString();
  const pat = await server.createToken({ scopes: ['users:read'], expire_at: soon });
  assert.equal((await server.request('GET', '/users', { token: pat.token })).status, 200);
  await new Promise((r) => setTimeout(r, 1700));
  assert.equal((await server.request('GET', '/users', { token: pat.token })).status, 401);
});

test('token routes need admin; a restricted admin PAT can only mint within its namespaces', async () => {
  const nonAdmin = await server.createToken({ scopes: ['users:read', 'users:write', 'secrets:write'] });
  for (const [method, path] of [['GET', '/tokens'], ['POST', '/tokens'], ['GET', '/tokens/x'], ['DELETE', '/tokens/x'], ['POST', '/tokens/x/rotate']] as const) {
    assert.equal((await server.request(method, path, { token: nonAdmin.token, body: method === 'POST' ? {} : undefined })).status, 403, `${method} ${path}`);
  }
  const restricted = await server.createToken({ scopes: ['admin'], namespaces: ['team-a', 'team-b'] });
  const wider = await server.request('POST', '/tokens', { token: restricted.token, body: { name: 'wide', scopes: ['admin'] } });
  assert.equal(wider.status, 403);
  const other = await server.request('POST', '/tokens', { token: restricted.token, body: { name: 'other', scopes: ['admin'], namespaces: ['team-c'] } });
  assert.equal(other.status, 403);
  const inside = await server.request<Token>('POST', '/tokens', { token: restricted.token, body: { name: 'inside', scopes: ['secrets:read'], namespaces: ['team-b'] } });
  assert.equal(inside.status, 201);
  assert.deepEqual(inside.body.namespaces, ['team-b']);
});
