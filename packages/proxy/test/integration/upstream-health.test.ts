import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HealthCheckConfig } from '../../src/model/entrypoint.js';
import { createUpstreamRegistry } from '../../src/upstream/registry.js';
import { startTcpListener } from '../../src/dataplane/tcp.js';
import { deadPort, dial, entrypoint, httpServer, namedServer, readLine, sleep, waitFor } from './upstream-net-helpers.js';

const fast = (overrides: Partial<HealthCheckConfig> = {}): HealthCheckConfig => ({
  type: 'tcp',
  path: null,
  interval: 25,
  timeout: 200,
  rise: 2,
  fall: 2,
  ...overrides,
});

test('active TCP check: a stopped backend leaves the rotation and returns after `rise` good checks', async () => {
  const a = await namedServer('a');
  let b = await namedServer('b');
  const bPort = b.port;
  const registry = createUpstreamRegistry();
  const changes: string[] = [];
  registry.onHealthChange((id, key, healthy) => changes.push(`${id} ${key} ${healthy}`));
  const ep = entrypoint('Tcp', 'db', [a.port, bPort], { listener: 'db', health_check: fast() });
  registry.sync([ep]);
  const pool = registry.get(ep.id);
  assert.ok(pool);
  const listener = await startTcpListener({ name: 'db', listen_address: '127.0.0.1:0' }, () => registry.get(ep.id));
  const names = async (count: number): Promise<string[]> => {
    const out: string[] = [];
    for (let i = 0; i < count; i++) {
      const client = await dial(listener.address().port);
      out.push(await readLine(client));
      client.destroy();
    }
    return out;
  };
  try {
    assert.deepEqual((await names(4)).sort(), ['a', 'a', 'b', 'b']);
    await b.close();
    await waitFor(() => pool.unhealthy().length > 0, 3000, 'b marked unhealthy');
    assert.deepEqual(pool.unhealthy(), [`127.0.0.1:${bPort}`]);
    for (let i = 0; i < 6; i++) assert.equal(pool.pick()?.key, `127.0.0.1:${a.port}`);
    assert.deepEqual(await names(3), ['a', 'a', 'a']);

    b = await namedServer('b', bPort);
    await waitFor(() => pool.unhealthy().length === 0, 3000, 'b healthy again');
    assert.ok(b.accepted.length >= 2, `rise=2 needs two passing checks, saw ${b.accepted.length} connections`);
    assert.deepEqual((await names(4)).sort(), ['a', 'a', 'b', 'b']);
    assert.deepEqual(changes, [`tcp_db 127.0.0.1:${bPort} false`, `tcp_db 127.0.0.1:${bPort} true`]);
  } finally {
    await listener.close(100);
    registry.stop();
    await a.close();
    await b.close();
  }
});

test('active HTTP check: GETs the path, 5xx for `fall` checks marks unhealthy, 2xx for `rise` brings it back', async () => {
  let status = 200;
  const flaky = await httpServer(() => status);
  const steady = await httpServer(() => 302);
  const registry = createUpstreamRegistry();
  const ep = entrypoint('Http', 'web', [flaky.port, steady.port], {
    health_check: fast({ type: 'http', path: '/healthz', rise: 3, fall: 3 }),
  });
  registry.sync([ep]);
  const pool = registry.get(ep.id);
  assert.ok(pool);
  try {
    await waitFor(() => flaky.hits() >= 2 && steady.hits() >= 2, 3000, 'first checks');
    assert.deepEqual(pool.unhealthy(), [], '2xx and 3xx pass');
    status = 503;
    const hitsAtFailure = flaky.hits();
    await waitFor(() => pool.unhealthy().length === 1, 3000, 'flaky marked unhealthy');
    assert.ok(flaky.hits() - hitsAtFailure >= 3, 'fall=3 needs three failed checks');
    assert.deepEqual(pool.unhealthy(), [`127.0.0.1:${flaky.port}`]);
    status = 204;
    const hitsAtRecovery = flaky.hits();
    await waitFor(() => pool.unhealthy().length === 0, 3000, 'flaky healthy again');
    assert.ok(flaky.hits() - hitsAtRecovery >= 3, 'rise=3 needs three passing checks');
  } finally {
    registry.stop();
    await flaky.close();
    await steady.close();
  }
});

test('HTTP checks use the configured path and never overlap on one backend', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const paths = new Set<string>();
  const server: Server = createServer((req, res) => {
    paths.add(req.url ?? '');
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    setTimeout(() => {
      inFlight--;
      res.end('ok');
    }, 60);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const registry = createUpstreamRegistry();
  registry.sync([entrypoint('Http', 'slow', [port], { health_check: fast({ type: 'http', path: '/ready', interval: 10, timeout: 500 }) })]);
  try {
    await sleep(400);
    assert.deepEqual([...paths], ['/ready']);
    assert.equal(maxInFlight, 1);
    assert.deepEqual(registry.get('http_slow')?.unhealthy(), []);
  } finally {
    registry.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('an HTTP check that times out counts as failed', async () => {
  const server: Server = createServer(() => undefined); // never answers
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const registry = createUpstreamRegistry();
  registry.sync([entrypoint('Http', 'hang', [port], { health_check: fast({ type: 'http', timeout: 50, fall: 1 }) })]);
  try {
    await waitFor(() => (registry.get('http_hang')?.unhealthy().length ?? 0) === 1, 3000, 'timeout verdict');
  } finally {
    registry.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('without a health_check an Http entrypoint still gets the default TCP check: a dead backend is listed quickly', async () => {
  const live = await namedServer('live');
  const dead = await deadPort();
  const registry = createUpstreamRegistry();
  registry.sync([entrypoint('Http', 'web', [live.port, dead])]);
  const started = Date.now();
  try {
    await waitFor(() => (registry.get('http_web')?.unhealthy().length ?? 0) > 0, 3000, 'default check verdict');
    assert.ok(Date.now() - started < 1500, 'the first check is decisive and runs within a second');
    assert.deepEqual(registry.get('http_web')?.unhealthy(), [`127.0.0.1:${dead}`]);
  } finally {
    registry.stop();
    await live.close();
  }
});

test('an unchanged pool keeps its active verdicts across sync; a workers-only registry runs no checks', async () => {
  const dead = await deadPort();
  const live = await namedServer('live');
  const ep = entrypoint('Http', 'web', [live.port, dead], { health_check: fast({ fall: 1 }) });
  const primary = createUpstreamRegistry();
  const worker = createUpstreamRegistry({ activeChecks: false });
  // The primary pushes its verdicts; the worker applies them.
  primary.onHealthChange((id, key, healthy) => worker.get(id)?.setHealthy(key, healthy));
  primary.sync([ep]);
  worker.sync([ep]);
  try {
    await waitFor(() => (worker.get(ep.id)?.unhealthy().length ?? 0) === 1, 3000, 'verdict pushed to the worker');
    const before = primary.get(ep.id);
    primary.sync([{ ...ep }]);
    assert.equal(primary.get(ep.id), before);
    assert.deepEqual(primary.get(ep.id)?.unhealthy(), [`127.0.0.1:${dead}`]);
    const lonely = createUpstreamRegistry({ activeChecks: false });
    lonely.sync([ep]);
    await sleep(100);
    assert.deepEqual(lonely.get(ep.id)?.unhealthy(), [], 'no checks without activeChecks');
    lonely.stop();
  } finally {
    primary.stop();
    worker.stop();
    await live.close();
  }
});
