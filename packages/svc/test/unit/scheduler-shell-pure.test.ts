// Pure pieces of the scheduler shell: health streak tracking and its rebuild, the http probe URL rewrite, and
// the per-deployment metric families.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HealthTracker } from '../../src/health/tracker.js';
import { probeUrl } from '../../src/health/probe.js';
import { deploymentFamilies } from '../../src/scheduler/deployment-metrics.js';
import type { InstanceStats, ObservedInstance } from '../../src/runtime/runtime.js';

test('tracker: streaks, verdict flips wake the loop, ack until the next success, retain, snapshot copies', () => {
  const t = new HealthTracker();
  assert.equal(t.record('i1', 1, 'failure', 'refused'), false, 'never passed: no wake (the readiness gate governs)');
  assert.equal(t.record('i1', 1, 'success', null), true, 'became ready');
  assert.equal(t.record('i1', 1, 'success', null), false, 'unchanged');
  assert.equal(t.record('i1', 1, 'timeout', 'slow'), true);
  assert.equal(t.record('i1', 1, 'failure', 'refused'), true, 'a growing streak on an armed check wakes');
  t.ack('i1', 1);
  assert.equal(t.record('i1', 1, 'failure', 'refused'), false, 'handled streak: no wake');
  const [health] = t.snapshot();
  assert.equal(health?.instanceId, 'i1');
  assert.equal(health?.checks[0]?.lastStatus, null, 'unprobed check 0 is filled in');
  assert.deepEqual(health?.checks[1], { lastStatus: 'failure', consecutiveFailures: 3, everSucceeded: true, handled: true, lastMessage: 'refused' });
  t.record('i2', 0, 'success', null);
  t.retain(new Set(['i2']));
  assert.deepEqual(t.snapshot().map((h) => h.instanceId), ['i2']);
});

test('tracker: rebuilt from stored rows given newest first', () => {
  const t = HealthTracker.fromStored([
    { instance_id: 'a', check_index: 0, status: 'failure', message: 'x' },
    { instance_id: 'a', check_index: 0, status: 'timeout', message: 'y' },
    { instance_id: 'a', check_index: 0, status: 'success', message: null },
    { instance_id: 'a', check_index: 0, status: 'failure', message: 'z' },
    { instance_id: 'b', check_index: 1, status: 'success', message: null },
  ]);
  const byId = new Map(t.snapshot().map((h) => [h.instanceId, h.checks]));
  assert.deepEqual(byId.get('a')?.[0], { lastStatus: 'failure', consecutiveFailures: 2, everSucceeded: true, handled: false, lastMessage: 'x' });
  assert.equal(byId.get('b')?.[1]?.lastStatus, 'success');
});

test('probeUrl rewrites only a localhost host, keeping port, path and query', () => {
  assert.equal(probeUrl('http://localhost:8080/health?x=1', '172.18.0.5'), 'http://172.18.0.5:8080/health?x=1');
  assert.equal(probeUrl('http://localhost/', 'fd00::5'), 'http://[fd00::5]/');
  assert.equal(probeUrl('http://example.test:81/a', '172.18.0.5'), 'http://example.test:81/a');
  assert.equal(probeUrl('http://localhost.example:81/a', '172.18.0.5'), 'http://localhost.example:81/a');
  assert.throws(() => probeUrl('not a url', '1.2.3.4'));
});

test('metric families: summed per (name, namespace, runtime), live instances only, restarts from the records', () => {
  const instance = (id: string, deploymentId: string, state: ObservedInstance['state'] = 'running'): ObservedInstance => ({
    id, name: id, deploymentId, specHash: 'h', state, exitCode: null, startedAt: null, finishedAt: null, address: null, imageDigest: null,
  });
  const stats = (n: number): InstanceStats => ({
    cpuUsagePercent: n, memory: { usageBytes: n * 10, limitBytes: n * 100 }, network: { rxBytes: n, txBytes: 2 * n, rxPackets: 0, txPackets: 0 },
    diskIo: { readBytes: 3 * n, writeBytes: 4 * n }, pids: { current: n, limit: 0 },
  });
  const families = deploymentFamilies(
    [
      { id: 'parent', name: 'web', namespace: 'p', runtime: 'docker', restartCount: 2 },
      { id: 'child', name: 'web', namespace: 'p', runtime: 'docker', restartCount: 1 },
      { id: 'other', name: 'api', namespace: 'p', runtime: 'docker', restartCount: 0 },
    ],
    [instance('a', 'parent'), instance('b', 'child'), instance('c', 'child', 'exited'), instance('d', 'unknown')],
    new Map([['a', stats(1)], ['b', stats(2)], ['c', stats(50)]]),
    new Map([['docker', 1_700_000_000_500]]),
  );
  const value = (name: string, deployment: string) =>
    families.find((f) => f.name === name)?.samples.find((s) => s.labels.deployment === deployment)?.value;
  assert.equal(value('svc_deployment_instances', 'web'), 2);
  assert.equal(value('svc_deployment_instances', 'api'), 0);
  assert.equal(value('svc_deployment_cpu_usage_percent', 'web'), 3);
  assert.equal(value('svc_deployment_memory_usage_bytes', 'web'), 30);
  assert.equal(value('svc_deployment_memory_limit_bytes', 'web'), 300);
  assert.equal(value('svc_deployment_network_tx_bytes_total', 'web'), 6);
  assert.equal(value('svc_deployment_disk_write_bytes_total', 'web'), 12);
  assert.equal(value('svc_deployment_pids', 'web'), 3);
  assert.equal(value('svc_deployment_restarts_total', 'web'), 3);
  assert.equal(families.find((f) => f.name === 'svc_deployment_restarts_total')?.type, 'counter');
  assert.deepEqual(families.find((f) => f.name === 'svc_runtime_last_refresh_seconds')?.samples, [{ labels: { runtime: 'docker' }, value: 1_700_000_000 }]);
});
