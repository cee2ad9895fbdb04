// /healthz, /node/get, and the 10-second handler timeout (408, with a route-level opt-out).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { startTestServer, type TestServer } from '../support/server.js';
import { createTestApp } from '../support/app.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.close();
});

test('GET /healthz is 200 {"state":"UP"} without a token', async () => {
  const response = await server.request('GET', '/healthz', { token: null });
  assert.equal(response.status, 200);
  assert.deepEqual(response.body, { state: 'UP' });
});

test('GET /node/get reports the host: uptime "<n>s", GiB, three load averages', async () => {
  const response = await server.request<Record<string, unknown>>('GET', '/node/get');
  assert.equal(response.status, 200);
  const node = response.body;
  assert.deepEqual(Object.keys(node).sort(), ['arch', 'cpu_count', 'hostname', 'load_average', 'memory_available', 'memory_total', 'os', 'uptime']);
  assert.equal(node.hostname, os.hostname());
  assert.equal(node.os, os.platform());
  assert.equal(node.arch, os.arch());
  assert.match(String(node.uptime), /^\d+s$/);
  assert.ok(Math.abs(Number(String(node.uptime).slice(0, -1)) - os.uptime()) < 60);
  assert.equal(node.cpu_count, os.availableParallelism());
  const total = Number(node.memory_total);
  const available = Number(node.memory_available);
  assert.ok(Math.abs(total - os.totalmem() / 1024 ** 3) < 0.01, `memory_total ${total}`);
  assert.ok(available > 0 && available <= total);
  assert.ok(Array.isArray(node.load_average) && node.load_average.length === 3 && node.load_average.every((n) => typeof n === 'number'));
  const nonAdmin = await server.createToken({ scopes: ['deployments:read'] });
  assert.equal((await server.request('GET', '/node/get', { token: nonAdmin.token })).status, 403);
});

test('a handler running past the timeout answers 408 problem+json; `timeout: false` routes are exempt', async () => {
  const testApp = createTestApp({ app: { handlerTimeoutMs: 150 } });
  try {
    const slow = (ms: number) => new Promise((r) => setTimeout(r, ms));
    testApp.app.get('/slow', { config: { auth: { public: true } } }, async () => {
      await slow(400);
      return { late: true };
    });
    testApp.app.get('/stream', { config: { auth: { public: true }, timeout: false } }, async () => {
      await slow(400);
      return { streamed: true };
    });
    testApp.app.get('/fast', { config: { auth: { public: true } } }, async () => ({ fast: true }));
    await testApp.app.ready();
    const timedOut = await testApp.app.inject({ method: 'GET', url: '/slow' });
    assert.equal(timedOut.statusCode, 408);
    assert.equal(timedOut.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(timedOut.json().status, 408);
    assert.equal((await testApp.app.inject({ method: 'GET', url: '/stream' })).json().streamed, true);
    assert.equal((await testApp.app.inject({ method: 'GET', url: '/fast' })).json().fast, true);
  } finally {
    await testApp.close();
  }
});
