// Start-up, shutdown and durability of the real server process: secret-key refusal before binding, the seeded
// admin, SIGTERM, restart, kill -9 during writes, CORS and the bind address from config.toml.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { startTestServer, type TestServer } from '../support/server.js';

async function failedStart(env: Record<string, string | undefined>): Promise<{ code: number | string; stderr: string; server: TestServer }> {
  const server = await startTestServer({ env, expectFailure: true });
  const timer = setTimeout(() => void server.kill(), 20_000);
  const code = await server.exited();
  clearTimeout(timer);
  return { code, stderr: server.stderr(), server };
}

test('a missing or malformed SVC_SECRET_KEY stops start-up before binding, naming the variable', async () => {
  for (const key of [undefined, '', 'not-base64!!', Buffer.alloc(31, 1).toString('base64'), Buffer.alloc(33, 1).toString('base64')]) {
    const { code, stderr, server } = await failedStart({ SVC_SECRET_KEY: key });
    try {
      assert.equal(code, 1, `exit code for key ${JSON.stringify(key)}`);
      assert.match(stderr, /^error: .*SVC_SECRET_KEY/m);
      // Nothing happened before the check: no database file, nothing listening.
      assert.equal(existsSync(server.dbPath), false);
      await assert.rejects(fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) }));
    } finally {
      await server.close();
    }
  }
});

test('other invalid settings exit 1 naming the variable', async () => {
  for (const [name, value] of [['SVC_DB_POOL_SIZE', '0'], ['SVC_SCHEDULER_INTERVAL', 'fast'], ['RUST_LOG', 'svc=chatty'], ['SVC_ADMIN_PASSWORD', 'short']] as const) {
    // SVC_LOG (set by the helper) would win over RUST_LOG, so it is removed for that case.
    const { code, stderr, server } = await failedStart({ [name]: value, ...(name === 'RUST_LOG' ? { SVC_LOG: undefined } : {}) });
    await server.close();
    assert.equal(code, 1, name);
    assert.match(stderr, new RegExp(`error: .*${name}`), name);
  }
});

test('without SVC_ADMIN_PASSWORD a random admin password is printed once, and works', async () => {
  const server = await startTestServer({ env: { SVC_ADMIN_PASSWORD: undefined, SVC_LOG: 'info' }, expectFailure: true });
  try {
    await server.waitReady();
    const match = /admin password: (\S+)/.exec(server.stderr());
    assert.ok(match, server.stderr());
    const password = match[1] ?? '';
    assert.ok(password.length >= 20);
    assert.ok(!server.stdout().includes(password), 'the password is not in the logs');
    const token = await server.login('admin', password);
    assert.equal((await server.request('GET', '/users/me', { token })).status, 200);
    await server.restart();
    assert.equal(server.stderr().match(/admin password:/g)?.length, 1, 'printed only on the first start');
    assert.ok(await server.login('admin', password));
  } finally {
    await server.close();
  }
});

test('SIGTERM stops within 10 s with exit code 0; a restart keeps users, tokens and revocations', async () => {
  const server = await startTestServer();
  try {
    await server.request('POST', '/users', { body: { username: 'keeper', password: 'keeper-password' } });
    const pat = await server.createToken({ scopes: ['users:read'], namespaces: ['ns-x'] });
    const revoked = await server.createToken({ scopes: ['users:read'] });
    await server.request('DELETE', `/tokens/${revoked.id}`);
    // An idle keep-alive connection must not hold the stop.
    await server.request('GET', '/users');
    const stopped = await server.stop();
    assert.equal(stopped.code, 0);
    assert.ok(stopped.ms < 10_000, `stopped in ${stopped.ms} ms`);
    await server.restart();
    const users = await server.request<{ username: string }[]>('GET', '/users');
    assert.ok(users.body.some((u) => u.username === 'keeper'));
    assert.equal((await server.request('GET', '/users', { token: pat.token })).status, 200);
    assert.equal((await server.request('GET', '/users', { token: revoked.token })).status, 401);
    assert.equal((await server.request('GET', '/users/me')).status, 200, 'the admin session survives a restart');
    assert.ok(await server.login('keeper', 'keeper-password'));
    const listed = await server.request<{ id: string; namespaces: string[] }[]>('GET', '/tokens');
    assert.deepEqual(listed.body.find((t) => t.id === pat.id)?.namespaces, ['ns-x']);
  } finally {
    await server.close();
  }
});

test('kill -9 during writes leaves a usable database that holds every acknowledged write', async () => {
  const server = await startTestServer();
  try {
    const acknowledged: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, worker) => {
      for (let i = 0; !stop; i++) {
        const name = `w${worker}-${i}`;
        try {
          const response = await server.request('POST', '/namespaces', { body: { name } });
          if (response.status === 201) acknowledged.push(name);
        } catch {
          return; // the connection died with the process
        }
      }
    });
    await new Promise((r) => setTimeout(r, 700));
    await server.kill();
    stop = true;
    await Promise.all(writers);
    assert.ok(acknowledged.length > 10, `only ${acknowledged.length} writes before the kill`);

    const db = new Database(server.dbPath);
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    db.close();

    await server.restart();
    const namespaces = await server.request<{ name: string }[]>('GET', '/namespaces');
    assert.equal(namespaces.status, 200);
    const stored = new Set(namespaces.body.map((n) => n.name));
    const lost = acknowledged.filter((name) => !stored.has(name));
    assert.deepEqual(lost, [], 'acknowledged writes lost');
    assert.equal((await server.request('POST', '/namespaces', { body: { name: 'after-crash' } })).status, 201);
  } finally {
    await server.close();
  }
});

test('CORS: only configured origins get headers; preflight answers the spec methods and headers', async () => {
  const server = await startTestServer({ configToml: 'cors_origins = ["https://ui.example"]' });
  try {
    const preflight = await server.request('OPTIONS', '/users', {
      token: null,
      headers: { origin: 'https://ui.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://ui.example');
    assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, POST, PUT, DELETE, OPTIONS');
    assert.equal(preflight.headers.get('access-control-allow-headers'), 'Authorization, Content-Type, Accept');
    const simple = await server.request('GET', '/users', { headers: { origin: 'https://ui.example' } });
    assert.equal(simple.headers.get('access-control-allow-origin'), 'https://ui.example');
    const foreign = await server.request('GET', '/users', { headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    const foreignPreflight = await server.request('OPTIONS', '/users', {
      token: null,
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(foreignPreflight.headers.get('access-control-allow-origin'), null);
  } finally {
    await server.close();
  }
  const plain = await startTestServer();
  try {
    const response = await plain.request('GET', '/users', { headers: { origin: 'https://ui.example' } });
    assert.equal(response.headers.get('access-control-allow-origin'), null, 'no CORS without cors_origins');
  } finally {
    await plain.close();
  }
});

test('credentials never reach the logs, even at trace level', async () => {
  const server = await startTestServer({ env: { SVC_LOG: 'trace' } });
  try {
    const pat = await server.createToken({ scopes: ['users:read'] });
    await server.request('POST', '/users', { body: { username: 'logged', password: 'do-not-log-me-please' } });
    await server.login('logged', 'do-not-log-me-please');
    await server.request('GET', '/users', { token: pat.token });
    await server.request('GET', `/users?ticket=svc_st_secretticket&token=${pat.token}`, { token: pat.token });
    await server.request('POST', '/login', { token: null, body: { username: 'admin', password: 'wrong-but-secret-pw' } });
    const logs = server.stdout() + server.stderr();
    assert.ok(logs.includes('"url":"/users"'), 'requests are logged at this level');
    for (const secret of [pat.token, server.adminToken, server.adminPassword, 'do-not-log-me-please', 'wrong-but-secret-pw', 'svc_st_secretticket']) {
      assert.ok(!logs.includes(secret), `'${secret.slice(0, 12)}...' appears in the logs`);
    }
    assert.ok(!/authorization/i.test(logs), 'no Authorization header in the logs');
  } finally {
    await server.close();
  }
});

test('`svc server start` (the CLI entry) serves the same server and exits 0 on SIGTERM', async () => {
  const server = await startTestServer({ entry: ['packages/svc/src/cli/main.ts', 'server', 'start'] });
  try {
    assert.equal((await server.request('GET', '/users/me')).status, 200);
    const stopped = await server.stop();
    assert.equal(stopped.code, 0);
    assert.ok(stopped.ms < 10_000);
  } finally {
    await server.close();
  }
});

test('SIGTERM with a followed log stream still open exits 0 within 10 s', async () => {
  const server = await startTestServer({ env: { SVC_SCHEDULER: 'off' } });
  try {
    const created = await server.request<{ id: string }>('POST', '/deployments', {
      body: { name: 'stop-test', runtime: 'docker', namespace: 's1-stop', image: 's1-none/none:none', replicas: 0 },
    });
    assert.equal(created.status, 201, created.text);
    const stream = await fetch(`${server.baseUrl}/deployments/${created.body.id}/logs?follow=true`, {
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    assert.equal(stream.status, 200);
    const reading = stream.body?.getReader().read().catch(() => undefined);
    const stopped = await server.stop();
    assert.equal(stopped.code, 0);
    assert.ok(stopped.ms < 10_000, `stopped in ${stopped.ms} ms`);
    await reading;
  } finally {
    await server.close();
  }
});
