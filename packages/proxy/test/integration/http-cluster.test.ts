import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDataPlane } from '../../src/dataplane/index.js';
import { deadPort, request, route, startBackend } from './http-helpers.js';

test('workers > 1: workers share the listener, get updates and health from the primary, metrics are summed', async () => {
  const backend = await startBackend('b', (req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`pid-of-proxy-peer:${req.socket.remotePort}`);
  });
  const dead = await deadPort();
  const plane = createDataPlane({
    listeners: { http: { listen_address: '127.0.0.1:0' }, https: null, tcp: [], udp: [] },
    workers: 2,
    trusted_proxies: [],
  });
  plane.update([
    route('c', [backend.port], { hostnames: ['c.test'] }),
    route('dead', [dead], {
      hostnames: ['dead.test'],
      health_check: { type: 'tcp', path: null, interval: 50, timeout: 50, rise: 1, fall: 1 },
    }),
  ]);
  try {
    await plane.start();
    const port = plane.addresses().http?.port;
    assert.ok(port !== undefined && port > 0);
    for (let i = 0; i < 6; i++) assert.equal((await request(port, { host: 'c.test' })).status, 200);
    assert.equal((await request(port, { host: 'nope.test' })).status, 404);

    plane.update([route('c2', [backend.port], { hostnames: ['c2.test'] })]);
    // Each worker applies the update when its IPC message arrives; wait until both answer with the new table.
    let ok = 0;
    for (let i = 0; i < 50 && ok < 6; i++) {
      const r = await request(port, { host: 'c2.test' });
      ok = r.status === 200 ? ok + 1 : 0;
      if (r.status !== 200) await new Promise((res) => setTimeout(res, 20));
    }
    assert.equal(ok, 6);
    assert.equal((await request(port, { host: 'c.test' })).status, 404);

    const metrics = await plane.metrics();
    assert.match(metrics, /svc_proxy_reloads_total 2/, 'reloads counted once, by the primary');
    const served = /svc_proxy_requests_total\{entrypoint="http_c",status="200"\} (\d+)/.exec(metrics);
    assert.equal(served?.[1], '6', 'requests of both workers summed');
  } finally {
    await plane.stop();
    await backend.close();
  }
});

test('workers > 1: active health checks run in the primary and mark the backend unhealthy', async () => {
  const dead = await deadPort();
  const plane = createDataPlane({
    listeners: { http: { listen_address: '127.0.0.1:0' }, https: null, tcp: [], udp: [] },
    workers: 2,
    trusted_proxies: [],
  });
  plane.update([
    route('dead', [dead], {
      hostnames: ['dead.test'],
      health_check: { type: 'tcp', path: null, interval: 50, timeout: 50, rise: 1, fall: 1 },
    }),
  ]);
  try {
    await plane.start();
    for (let i = 0; i < 40 && plane.unhealthyBackends('http_dead').length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(plane.unhealthyBackends('http_dead'), [`127.0.0.1:${dead}`]);
    assert.match(await plane.metrics(), new RegExp(`svc_proxy_backend_up\\{entrypoint="http_dead",backend="127.0.0.1:${dead}"\\} 0`));
  } finally {
    await plane.stop();
  }
});

test('start() rejects and binds nothing when a listener cannot be bound', async () => {
  const first = createDataPlane({
    listeners: { http: { listen_address: '127.0.0.1:0' }, https: null, tcp: [], udp: [] },
    workers: 1,
    trusted_proxies: [],
  });
  await first.start();
  const taken = first.addresses().http?.port as number;
  try {
    const second = createDataPlane({
      listeners: { http: { listen_address: `127.0.0.1:${taken}` }, https: null, tcp: [], udp: [] },
      workers: 1,
      trusted_proxies: [],
    });
    await assert.rejects(second.start(), /cannot listen/);
    await second.stop();
    const bad = createDataPlane({
      listeners: { http: { listen_address: 'not-an-address' }, https: null, tcp: [], udp: [] },
      workers: 1,
      trusted_proxies: [],
    });
    await assert.rejects(bad.start(), /invalid listen_address/);
    await bad.stop();
  } finally {
    await first.stop();
  }
});
