// Users over HTTP against the real server: CRUD, every user violation code, conflicts, self-deletion.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';

interface Problem {
  status: number;
  title: string;
  detail: string;
  violations: { property_path: string; message: string; code: string }[];
}
interface UserEntry {
  id: string;
  username: string;
  created_at: string;
}

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

const codesOf = (problem: Problem) => problem.violations.map((v) => v.code).sort();

test('POST /users creates; GET /users lists {id, username, created_at}', async () => {
  const created = await server.request<UserEntry>('POST', '/users', { body: { username: 'alice', password: 'alice-password' } });
  assert.equal(created.status, 201);
  assert.deepEqual(Object.keys(created.body).sort(), ['created_at', 'id', 'username']);
  assert.equal(created.body.username, 'alice');
  const list = await server.request<UserEntry[]>('GET', '/users');
  assert.equal(list.status, 200);
  const alice = list.body.find((u) => u.username === 'alice');
  assert.deepEqual(alice, created.body);
  assert.ok(list.body.every((u) => Object.keys(u).sort().join() === 'created_at,id,username'));
  // The new user can log in, and sees their own record.
  const token = await server.login('alice', 'alice-password');
  const me = await server.request<Record<string, unknown>>('GET', '/users/me', { token });
  assert.equal(me.body.id, created.body.id);
  assert.deepEqual(Object.keys(me.body).sort(), ['created_at', 'id', 'login_at', 'status', 'updated_at', 'username']);
  assert.equal(me.body.updated_at, null);
});

test('every user violation code, reported all at once with one detail line each', async () => {
  const response = await server.request<Problem>('POST', '/users', { body: { username: '-', password: 'short' } });
  assert.equal(response.status, 422);
  assert.equal(response.body.title, 'Validation failed');
  assert.deepEqual(codesOf(response.body), ['user.password.length', 'user.username.format', 'user.username.length']);
  assert.equal(response.body.detail.split('\n').length, 3);
  assert.ok(response.body.detail.split('\n').every((line) => /^(username|password): /.test(line)));
  const long = await server.request<Problem>('POST', '/users', { body: { username: 'a'.repeat(51), password: 'p'.repeat(129) } });
  assert.deepEqual(codesOf(long.body), ['user.password.length', 'user.username.length']);
  const onPut = await server.request<Problem>('PUT', `/users/${(await server.request<{ id: string }>('GET', '/users/me')).body.id}`, {
    body: { username: 'bad name' },
  });
  assert.equal(onPut.status, 422);
  assert.deepEqual(codesOf(onPut.body), ['user.username.format']);
});

test('duplicate usernames are 409, case-insensitively; nothing is created', async () => {
  const before = (await server.request<UserEntry[]>('GET', '/users')).body.length;
  assert.equal((await server.request('POST', '/users', { body: { username: 'bob', password: 'bob-password' } })).status, 201);
  assert.equal((await server.request('POST', '/users', { body: { username: 'bob', password: 'other-password' } })).status, 409);
  assert.equal((await server.request('POST', '/users', { body: { username: 'BOB', password: 'other-password' } })).status, 409);
  assert.equal((await server.request<UserEntry[]>('GET', '/users')).body.length, before + 1);
});

test('PUT /users/{id}: fields optional, empty body a no-op, password change works, 404 and 409', async () => {
  const carol = (await server.request<UserEntry>('POST', '/users', { body: { username: 'carol', password: 'carol-password' } })).body;
  const noop = await server.request<Record<string, unknown>>('PUT', `/users/${carol.id}`, { body: {} });
  assert.equal(noop.status, 200);
  assert.equal(noop.body.username, 'carol');
  assert.equal(noop.body.updated_at, null);
  const noBody = await server.request('PUT', `/users/${carol.id}`);
  assert.equal(noBody.status, 200);
  const renamed = await server.request<Record<string, unknown>>('PUT', `/users/${carol.id}`, { body: { username: 'carola' } });
  assert.equal(renamed.status, 200);
  assert.equal(renamed.body.username, 'carola');
  assert.ok(typeof renamed.body.updated_at === 'string');
  assert.equal((await server.request('PUT', `/users/${carol.id}`, { body: { password: 'new-carol-password' } })).status, 200);
  assert.equal((await server.request('POST', '/login', { token: null, body: { username: 'carola', password: 'carol-password' } })).status, 401);
  assert.ok(await server.login('carola', 'new-carol-password'));
  assert.equal((await server.request('PUT', `/users/${carol.id}`, { body: { username: 'admin' } })).status, 409);
  assert.equal((await server.request('PUT', '/users/00000000-0000-0000-0000-000000000000', { body: {} })).status, 404);
  assert.equal((await server.request('PUT', `/users/${carol.id}`, { body: { username: 5 } })).status, 400);
  assert.equal((await server.request('PUT', `/users/${carol.id}`, { body: { role: 'root' } })).status, 400);
});

test('DELETE /users/{id}: 204, then the user and their tokens are gone; self-delete is 409', async () => {
  const dave = (await server.request<UserEntry>('POST', '/users', { body: { username: 'dave', password: 'dave-password' } })).body;
  const daveSession = await server.login('dave', 'dave-password');
  const davePat = await server.createToken({ scopes: ['users:read'], as: daveSession });
  assert.equal((await server.request('DELETE', `/users/${dave.id}`, { token: daveSession })).status, 409);
  assert.equal((await server.request('DELETE', `/users/${dave.id}`)).status, 204);
  assert.equal((await server.request('DELETE', `/users/${dave.id}`)).status, 404);
  assert.equal((await server.request('GET', '/users/me', { token: daveSession })).status, 401);
  assert.equal((await server.request('GET', '/users', { token: davePat.token })).status, 401);
  const me = (await server.request<{ id: string }>('GET', '/users/me')).body;
  const self = await server.request<Problem>('DELETE', `/users/${me.id}`);
  assert.equal(self.status, 409);
  assert.equal((await server.request('GET', '/users/me')).status, 200);
});

test('users scopes: users:read lists but cannot write; /users/me needs only a valid token', async () => {
  const reader = await server.createToken({ scopes: ['users:read'] });
  const other = await server.createToken({ scopes: ['secrets:read'] });
  assert.equal((await server.request('GET', '/users', { token: reader.token })).status, 200);
  assert.equal((await server.request('POST', '/users', { token: reader.token, body: { username: 'eve', password: 'eve-password' } })).status, 403);
  assert.equal((await server.request('GET', '/users', { token: other.token })).status, 403);
  const me = await server.request<{ username: string }>('GET', '/users/me', { token: other.token });
  assert.equal(me.status, 200);
  assert.equal(me.body.username, 'admin');
});

test('a password change signs the user out of their other sessions; the caller and PATs keep working', async () => {
  const gina = (await server.request<UserEntry>('POST', '/users', { body: { username: 'gina', password: 'gina-password' } })).body;
  const laptop = await server.login('gina', 'gina-password');
  const phone = await server.login('gina', 'gina-password');
  const pat = await server.createToken({ scopes: ['users:read'], as: laptop });
  const changed = await server.request('PUT', `/users/${gina.id}`, { token: laptop, body: { password: 'gina-new-password' } });
  assert.equal(changed.status, 200);
  assert.equal((await server.request('GET', '/users/me', { token: laptop })).status, 200, 'the caller stays signed in');
  assert.equal((await server.request('GET', '/users/me', { token: phone })).status, 401, 'other sessions end');
  assert.equal((await server.request('GET', '/users', { token: pat.token })).status, 200, 'PATs are explicit and stay');
  // An administrator resetting someone else's password ends all of that user's sessions.
  await server.request('PUT', `/users/${gina.id}`, { body: { password: 'gina-third-password' } });
  assert.equal((await server.request('GET', '/users/me', { token: laptop })).status, 401);
  assert.equal((await server.request('GET', '/users/me')).status, 200, "the admin's own session is untouched");
  // A rename alone signs nobody out.
  const again = await server.login('gina', 'gina-third-password');
  await server.request('PUT', `/users/${gina.id}`, { body: { username: 'gina2' } });
  assert.equal((await server.request('GET', '/users/me', { token: again })).status, 200);
});

test('a namespace-restricted token cannot manage users (it could mint itself an unrestricted session)', async () => {
  const restricted = await server.createToken({ scopes: ['users:read', 'users:write'], namespaces: ['team-a'] });
  const me = (await server.request<{ id: string }>('GET', '/users/me')).body;
  const before = (await server.request<UserEntry[]>('GET', '/users')).body;
  assert.equal((await server.request('POST', '/users', { token: restricted.token, body: { username: 'mallory', password: 'mallory-password' } })).status, 403);
  assert.equal((await server.request('PUT', `/users/${me.id}`, { token: restricted.token, body: { password: 'hijacked-password' } })).status, 403);
  assert.equal((await server.request('DELETE', `/users/${me.id}`, { token: restricted.token })).status, 403);
  assert.equal((await server.request('GET', '/users', { token: restricted.token })).status, 200, 'reading the list is allowed');
  assert.deepEqual((await server.request<UserEntry[]>('GET', '/users')).body, before);
  assert.ok(await server.login('admin', server.adminPassword), 'the admin password is unchanged');
});
