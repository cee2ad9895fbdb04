import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDataPlane } from '../../src/dataplane/index.js';
import { deadPort, request, route, startBackend } from './http-helpers.js';

function plane(workers: number, listen_address = '127.0.0.1:0') {
  return createDataPlane({ listeners: { http: { listen_address }, https: null, tcp: [], udp: [] }, workers, trusted_proxies: [] });
}

/** A route to a port nothing listens on, checked every 50 ms and declared down at the first failure. */
function deadRoute(port: number) {
  return route('dead', [port], {
    hostnames: ['dead.test'],
    health_check: { type: 'tcp', path: null, interval: 50, timeout: 50, rise: 1, fall: 1 },
  });
}

test('workers > 1: workers share the listener, get updates and health from the primary, metrics are summed', async () => {
  const backend = await startBackend('b', (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`pid-of-proxy-peer:${req.socket.remotePort}`);
  });
  const dp = plane(2);
  dp.update([route('c', [backend.port], { hostnames: ['c.test'] }), deadRoute(await deadPort())]);
  try {
    await dp.start();
    const port = dp.addresses().http?.port;
    assert.ok(port !== undefined && port > 0);
    for (let i = 0; i < 6; i++) assert.equal((await request(port, { host: 'c.test' })).status, 200);
    assert.equal((await request(port, { host: 'nope.test' })).status, 404);

    dp.update([route('c2', [backend.port], { hostnames: ['c2.test'] })]);
    // Each worker applies the update when its IPC message arrives; wait until both answer with the new table.
    let ok = 0;
    for (let i = 0; i < 50 && ok < 6; i++) {
      const r = await request(port, { host: 'c2.test' });
      ok = r.status === 200 ? ok + 1 : 0;
      if (r.status !== 200) await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(ok, 6);
    assert.equal((await request(port, { host: 'c.test' })).status, 404);

    const metrics = await dp.metrics();
    assert.match(metrics, /svc_proxy_reloads_total 2/, 'reloads counted once, by the primary');
    const served = /svc_proxy_requests_total\{entrypoint="http_c",status="200"\} (\d+)/.exec(metrics);
    assert.equal(served?.[1], '6', 'requests of both workers summed');
  } finally {
    await dp.stop();
    await backend.close();
  }
});

test('workers > 1: active health checks run in the primary and mark the backend unhealthy', async () => {
  const dead = await deadPort();
  const dp = plane(2);
  dp.update([deadRoute(dead)]);
  try {
    await dp.start();
    for (let i = 0; i < 40 && dp.unhealthyBackends('http_dead').length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(dp.unhealthyBackends('http_dead'), [`127.0.0.1:${dead}`]);
    assert.match(await dp.metrics(), new RegExp(`svc_proxy_backend_up\\{entrypoint="http_dead",backend="127.0.0.1:${dead}"\\} 0`));
  } finally {
    await dp.stop();
  }
});

test('start() rejects and binds nothing when a listener cannot be bound', async () => {
  const first = plane(1);
  await first.start();
  const taken = first.addresses().http?.port as number;
  try {
    const second = plane(1, `127.0.0.1:${taken}`);
    await assert.rejects(second.start(), /cannot listen/);
    await second.stop();
    const bad = plane(1, 'not-an-address');
    await assert.rejects(bad.start(), /invalid listen_address/);
    await bad.stop();
  } finally {
    await first.stop();
  }
});
