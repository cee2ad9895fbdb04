import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultEntrypointConfig, type Entrypoint, type HealthCheckConfig } from '../../src/model/entrypoint.js';
import { createUpstreamRegistry } from '../../src/upstream/registry.js';
import { nextCheckState, resolveHealthCheck, UNCHECKED, DEFAULT_HEALTH_CHECK } from '../../src/upstream/health.js';

function entrypoint(
  name: string,
  backends: Array<[string, number, number?]>,
  health_check: HealthCheckConfig | null = null,
  protocol: Entrypoint['protocol'] = 'Http',
): Entrypoint {
  return {
    id: `${protocol.toLowerCase()}_${name}`,
    name,
    protocol,
    source: 'api',
    backends: backends.map(([address, port, weight]) => ({ address, port, weight: weight ?? 100 })),
    config: { ...defaultEntrypointConfig(), health_check },
  };
}

const passiveOnly = { activeChecks: false } as const;

test('rise/fall state machine: first result decides, then fall/rise consecutive results flip it', () => {
  const cfg = { rise: 2, fall: 3 };
  let s = nextCheckState({ ...UNCHECKED }, false, cfg);
  assert.deepEqual(s, { healthy: false, checked: true, streak: 0 });
  s = nextCheckState(s, true, cfg);
  assert.equal(s.healthy, false);
  s = nextCheckState(s, false, cfg); // a contrary result resets the streak
  s = nextCheckState(s, true, cfg);
  assert.equal(s.healthy, false);
  s = nextCheckState(s, true, cfg);
  assert.equal(s.healthy, true);
  s = nextCheckState(s, false, cfg);
  s = nextCheckState(s, false, cfg);
  assert.equal(s.healthy, true);
  s = nextCheckState(s, false, cfg);
  assert.equal(s.healthy, false);
});

test('default health check: TCP for Http and Tcp, none for Udp; configured values are clamped', () => {
  assert.deepEqual(resolveHealthCheck(entrypoint('a', [['h', 1]])), DEFAULT_HEALTH_CHECK);
  assert.deepEqual(resolveHealthCheck(entrypoint('a', [['h', 1]], null, 'Tcp')), DEFAULT_HEALTH_CHECK);
  assert.equal(resolveHealthCheck(entrypoint('a', [['h', 1]], null, 'Udp')), null);
  const clamped = resolveHealthCheck(
    entrypoint('a', [['h', 1]], { type: 'http', path: '/hz', interval: 0, timeout: -5, rise: 0, fall: Number.NaN }),
  );
  assert.deepEqual(clamped, { type: 'http', path: '/hz', interval: 10, timeout: 1, rise: 1, fall: 2 });
});

test('pools balance by weight and keys bracket IPv6', () => {
  const registry = createUpstreamRegistry(passiveOnly);
  const pools = registry.sync([entrypoint('web', [['10.0.0.1', 80, 2], ['::1', 81, 1]])]);
  const pool = pools.get('http_web');
  assert.ok(pool);
  assert.deepEqual(pool.backends.map((b) => b.key), ['10.0.0.1:80', '[::1]:81']);
  const picks = Array.from({ length: 6 }, () => pool.pick()?.key);
  assert.deepEqual(picks, ['10.0.0.1:80', '[::1]:81', '10.0.0.1:80', '10.0.0.1:80', '[::1]:81', '10.0.0.1:80']);
  registry.stop();
});

test('an unchanged pool is the same object after sync, keeping position and health; a changed one is rebuilt', () => {
  const registry = createUpstreamRegistry(passiveOnly);
  const first = registry.sync([entrypoint('web', [['a', 1], ['b', 1]]), entrypoint('api', [['c', 1]])]);
  const web = first.get('http_web');
  assert.ok(web);
  assert.equal(web.pick()?.key, 'a:1');
  web.setHealthy('b:1', false);
  // Same backends in another order: still the same pool.
  const second = registry.sync([entrypoint('web', [['b', 1], ['a', 1]]), entrypoint('api', [['c', 1]])]);
  assert.equal(second.get('http_web'), web);
  assert.deepEqual(web.unhealthy(), ['b:1']);
  // A changed weight rebuilds the pool but carries the verdicts of the backends it keeps.
  const third = registry.sync([entrypoint('web', [['a', 1], ['b', 1, 5]])]);
  const rebuilt = third.get('http_web');
  assert.ok(rebuilt && rebuilt !== web);
  assert.deepEqual(rebuilt.unhealthy(), ['b:1']);
  assert.equal(registry.get('http_api'), undefined, 'removed pool is gone');
  // A changed health check also rebuilds.
  const hc: HealthCheckConfig = { type: 'tcp', path: null, interval: 1000, timeout: 100, rise: 1, fall: 1 };
  const fourth = registry.sync([entrypoint('web', [['a', 1], ['b', 1, 5]], hc)]);
  assert.notEqual(fourth.get('http_web'), rebuilt);
  registry.stop();
});

test('passive health: 3 consecutive errors or 1 refusal mark unhealthy; a success resets the count', () => {
  const changes: string[] = [];
  const registry = createUpstreamRegistry(passiveOnly);
  registry.onHealthChange((id, key, healthy) => changes.push(`${id} ${key} ${healthy}`));
  const pool = registry.sync([entrypoint('web', [['a', 1], ['b', 1], ['c', 1]])]).get('http_web');
  assert.ok(pool);
  const [a, b] = pool.backends;
  assert.ok(a && b);
  pool.reportFailure(a);
  pool.reportFailure(a, 'timeout');
  pool.reportSuccess(a);
  pool.reportFailure(a);
  pool.reportFailure(a);
  assert.deepEqual(pool.unhealthy(), []);
  pool.reportFailure(a);
  assert.deepEqual(pool.unhealthy(), ['a:1']);
  pool.reportFailure(b, 'refused');
  assert.deepEqual(pool.unhealthy(), ['a:1', 'b:1']);
  assert.deepEqual(changes, ['http_web a:1 false', 'http_web b:1 false']);
  for (let i = 0; i < 5; i++) assert.equal(pool.pick()?.key, 'c:1');
  registry.stop();
});

test('a passively failed backend returns after the cool-down, and one more failure takes it out again', () => {
  let clock = 1000;
  const changes: string[] = [];
  const registry = createUpstreamRegistry({ activeChecks: false, now: () => clock, passiveCooldownMs: 5000 });
  registry.onHealthChange((_id, key, healthy) => changes.push(`${key} ${healthy}`));
  const pool = registry.sync([entrypoint('web', [['a', 1], ['b', 1]])]).get('http_web');
  const a = pool?.backends[0];
  assert.ok(pool && a);
  pool.reportFailure(a, 'refused');
  clock += 4999;
  assert.deepEqual(pool.unhealthy(), ['a:1']);
  clock += 1;
  assert.deepEqual(pool.unhealthy(), []);
  pool.reportFailure(a, 'timeout');
  assert.deepEqual(pool.unhealthy(), ['a:1']);
  assert.deepEqual(changes, ['a:1 false', 'a:1 true', 'a:1 false']);
  registry.stop();
});

test('active verdicts: setHealthy false excludes, true clears a passive cool-down too', () => {
  const registry = createUpstreamRegistry(passiveOnly);
  const pool = registry.sync([entrypoint('web', [['a', 1], ['b', 1]])]).get('http_web');
  const a = pool?.backends[0];
  assert.ok(pool && a);
  pool.setHealthy('a:1', false);
  pool.reportSuccess(a); // passive success does not override the active verdict
  assert.deepEqual(pool.unhealthy(), ['a:1']);
  pool.setHealthy('a:1', true);
  pool.reportFailure(a, 'refused');
  assert.deepEqual(pool.unhealthy(), ['a:1']);
  pool.setHealthy('a:1', true);
  assert.deepEqual(pool.unhealthy(), []);
  pool.setHealthy('nope:1', false); // unknown keys are ignored
  assert.deepEqual(pool.unhealthy(), []);
  registry.stop();
});

test('pick: fail open, affinity while healthy, exclusion for retries', () => {
  const registry = createUpstreamRegistry(passiveOnly);
  const pool = registry.sync([entrypoint('web', [['a', 1], ['b', 1]])]).get('http_web');
  assert.ok(pool);
  for (let i = 0; i < 4; i++) assert.equal(pool.pick('b:1')?.key, 'b:1');
  pool.setHealthy('b:1', false);
  assert.equal(pool.pick('b:1')?.key, 'a:1', 'affinity to an unhealthy backend is dropped');
  pool.setHealthy('a:1', false);
  const seen = new Set([pool.pick()?.key, pool.pick()?.key]);
  assert.deepEqual([...seen].sort(), ['a:1', 'b:1'], 'fail open');
  assert.equal(pool.pick(null, new Set(['a:1']))?.key, 'b:1');
  assert.equal(pool.pick(null, new Set(['a:1', 'b:1'])), null);
  registry.stop();
});

test('listener errors do not break health tracking; removed pools stop', async () => {
  let probes = 0;
  const registry = createUpstreamRegistry({
    probe: async () => {
      probes++;
      return false;
    },
    random: () => 0,
  });
  const seen: string[] = [];
  registry.onHealthChange(() => {
    throw new Error('boom');
  });
  registry.onHealthChange((_id, key, healthy) => seen.push(`${key} ${healthy}`));
  const hc: HealthCheckConfig = { type: 'tcp', path: null, interval: 20, timeout: 10, rise: 1, fall: 1 };
  const pool = registry.sync([entrypoint('web', [['a', 1]], hc)]).get('http_web');
  await new Promise((r) => setTimeout(r, 60));
  assert.deepEqual(seen, ['a:1 false']);
  assert.deepEqual(pool?.unhealthy(), ['a:1']);
  registry.sync([]);
  const after = probes;
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(probes, after, 'no probes after the pool was removed');
  registry.stop();
});

test('Udp entrypoints without a health_check get no active checks', async () => {
  let probes = 0;
  const registry = createUpstreamRegistry({ probe: async () => (probes++, false), random: () => 0 });
  registry.sync([entrypoint('dns', [['a', 53]], null, 'Udp')]);
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(probes, 0);
  registry.stop();
});

test('first checks are spread by the random delay, bounded by min(interval, 1 s); transitions only on change', async () => {
  const { startActiveChecks } = await import('../../src/upstream/health.js');
  const started = Date.now();
  const firstProbe = new Map<string, number>();
  const draws = [0.05, 0.3];
  const transitions: string[] = [];
  const backends = ['a', 'b'].map((address) => ({ address, port: 1, weight: 1, key: `${address}:1` }));
  const checks = startActiveChecks(
    backends,
    { type: 'tcp', path: null, interval: 5000, timeout: 10, rise: 1, fall: 1 },
    (key, healthy) => transitions.push(`${key} ${healthy}`),
    {
      random: () => draws.shift() ?? 0,
      probe: async (backend) => {
        if (!firstProbe.has(backend.key)) firstProbe.set(backend.key, Date.now() - started);
        return backend.address === 'a';
      },
    },
  );
  await new Promise((r) => setTimeout(r, 450));
  checks.stop();
  const a = firstProbe.get('a:1') ?? -1;
  const b = firstProbe.get('b:1') ?? -1;
  assert.ok(a >= 40 && a < 200, `a first checked after ${a} ms (expected ~50)`);
  assert.ok(b >= 290 && b < 440, `b first checked after ${b} ms (expected ~300)`);
  assert.deepEqual(transitions, ['b:1 false'], 'a passing first check is no transition');
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function countingProbe(result: (key: string) => boolean) {
  const calls: string[] = [];
  return {
    calls,
    probe: async (backend: { key: string }, config: HealthCheckConfig) => {
      calls.push(`${backend.key} ${config.interval}`);
      return result(backend.key);
    },
  };
}

test('pools with the same backend and check share one prober, and all of them get its verdicts', async () => {
  const { calls, probe } = countingProbe(() => false);
  const registry = createUpstreamRegistry({ probe, random: () => 0 });
  const hc: HealthCheckConfig = { type: 'tcp', path: null, interval: 1000, timeout: 10, rise: 1, fall: 1 };
  const seen: string[] = [];
  registry.onHealthChange((id, key, healthy) => seen.push(`${id} ${key} ${healthy}`));
  const eps = Array.from({ length: 50 }, (_, i) => entrypoint(`web${i}`, [['a', 1]], hc));
  const pools = registry.sync(eps);
  await sleep(100);
  assert.deepEqual(calls, ['a:1 1000'], 'one probe for 50 pools');
  for (const pool of pools.values()) assert.deepEqual(pool.unhealthy(), ['a:1']);
  assert.equal(seen.length, 50);
  registry.stop();
});

test('a pool that joins a decided checker takes its verdict at once; the last pool to leave stops the prober', async () => {
  const { calls, probe } = countingProbe(() => false);
  const registry = createUpstreamRegistry({ probe, random: () => 0 });
  const hc: HealthCheckConfig = { type: 'tcp', path: null, interval: 20, timeout: 10, rise: 1, fall: 1 };
  const seen: string[] = [];
  registry.onHealthChange((id, key, healthy) => seen.push(`${id} ${key} ${healthy}`));
  const first = entrypoint('first', [['a', 1]], hc);
  const second = entrypoint('second', [['a', 1], ['b', 2]], hc);
  registry.sync([first]);
  await sleep(60);
  const beforeJoin = calls.filter((c) => c === 'a:1 20').length;
  assert.ok(beforeJoin >= 1);
  const pools = registry.sync([first, second]);
  assert.deepEqual(pools.get('http_second')?.unhealthy(), ['a:1'], 'no wait for a check of its own');
  assert.ok(seen.includes('http_second a:1 false'), 'the adopted verdict is reported like any transition');
  registry.sync([second]);
  await sleep(60);
  assert.ok(calls.filter((c) => c === 'a:1 20').length > beforeJoin, 'still checked for the remaining pool');
  registry.sync([]);
  await sleep(30);
  const stopped = calls.length;
  await sleep(80);
  assert.equal(calls.length, stopped, 'no probe once the last pool is gone');
  registry.stop();
});

test('different check configs or different backends do not share a prober', async () => {
  const { calls, probe } = countingProbe(() => true);
  const registry = createUpstreamRegistry({ probe, random: () => 0 });
  const hc = (interval: number): HealthCheckConfig => ({ type: 'tcp', path: null, interval, timeout: 10, rise: 1, fall: 1 });
  registry.sync([
    entrypoint('one', [['a', 1]], hc(1000)),
    entrypoint('two', [['a', 1]], hc(1001)),
    entrypoint('three', [['a', 2]], hc(1000)),
    entrypoint('four', [['a', 2]], { ...hc(1000), type: 'http', path: '/health' }),
    entrypoint('five', [['a', 1]], hc(1000)),
  ]);
  await sleep(100);
  assert.deepEqual([...calls].sort(), ['a:1 1000', 'a:1 1001', 'a:2 1000', 'a:2 1000']);
  registry.stop();
});

test('shared checker hub: reference counting, and a carried verdict seeds an undecided checker', async () => {
  const { createHealthCheckHub } = await import('../../src/upstream/health.js');
  let probes = 0;
  const hub = createHealthCheckHub({ probe: async () => (probes++, true), random: () => 0.99 });
  const backend = { address: 'a', port: 1, weight: 1, key: 'a:1' };
  const hc: HealthCheckConfig = { type: 'tcp', path: null, interval: 5000, timeout: 10, rise: 2, fall: 1 };
  const fresh: boolean[] = [];
  const one = hub.subscribe(backend, hc, (h) => fresh.push(h));
  assert.equal(one.verdict, null, 'undecided before the first check');
  const carried: boolean[] = [];
  const two = hub.subscribe(backend, hc, (h) => carried.push(h), false);
  assert.equal(hub.size, 1);
  assert.equal(two.verdict, false);
  assert.deepEqual(fresh, [false], 'the known verdict reaches the presumed-healthy subscriber');
  const other = hub.subscribe(backend, { ...hc, rise: 3 }, () => undefined);
  assert.equal(hub.size, 2);
  other.unsubscribe();
  one.unsubscribe();
  one.unsubscribe();
  assert.equal(hub.size, 1, 'a double unsubscribe does not drop the other subscriber');
  two.unsubscribe();
  assert.equal(hub.size, 0);
  await sleep(20);
  assert.equal(probes, 0, 'stopped before its first check');
});
