import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { createDataPlane } from '../../src/dataplane/index.js';
import { request, route } from './http-helpers.js';

/** Accepts TCP connections (the active TCP check passes) but resets every one that sends a request. */
async function resettingBackend(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.once('data', () => socket.resetAndDestroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address !== 'string');
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

test('workers > 1: a backend a worker takes out after passive failures is listed by the primary', async () => {
  const backend = await resettingBackend();
  const dp = createDataPlane({
    listeners: { http: { listen_address: '127.0.0.1:0' }, https: null, tcp: [], udp: [] },
    workers: 2,
    trusted_proxies: [],
  });
  // A slow TCP check that passes: only the traffic can tell this backend is broken.
  const broken = route('broken', [backend.port], {
    hostnames: ['broken.test'],
    health_check: { type: 'tcp', path: null, interval: 60_000, timeout: 500, rise: 1, fall: 1 },
  });
  dp.update([broken]);
  try {
    await dp.start();
    const port = dp.addresses().http?.port as number;
    assert.deepEqual(dp.unhealthyBackends('http_broken'), []);
    // 3 errors in a row take a backend out of one worker; 8 requests over 2 workers give one of them 4 or more.
    for (let i = 0; i < 8; i++) assert.equal((await request(port, { host: 'broken.test' })).status, 502);
    const key = `127.0.0.1:${backend.port}`;
    for (let i = 0; i < 40 && dp.unhealthyBackends('http_broken').length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(dp.unhealthyBackends('http_broken'), [key]);

    // The route goes away: so does the worker's verdict, even when the same route comes back.
    dp.update([]);
    assert.deepEqual(dp.unhealthyBackends('http_broken'), []);
    dp.update([broken]);
    assert.deepEqual(dp.unhealthyBackends('http_broken'), []);
  } finally {
    await dp.stop();
    await backend.close();
  }
});
