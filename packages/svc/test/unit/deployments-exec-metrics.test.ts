// Pure parts of the exec WebSocket (query, client frames, target instance) and of the Deployment metrics object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiProblem } from '../../src/api/problem.js';
import { execTarget, parseClientFrame, parseExecRequest } from '../../src/api/exec.js';
import { buildDeploymentMetrics } from '../../src/api/deployment-metrics.js';
import type { InstanceStats, ObservedInstance } from '../../src/runtime/runtime.js';

function badRequest(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => error instanceof ApiProblem && error.status === 400 && pattern.test(error.detail));
}

test('exec query: default /bin/sh without a TTY; repeated command words in order; size in pairs', () => {
  assert.deepEqual(parseExecRequest({}), { command: ['/bin/sh'], tty: false, container: null });
  assert.deepEqual(parseExecRequest({ command: ['sh', '-c', 'exit 3'], tty: 'true', container: 'ns_a_01234567', cols: '80', rows: '24' }), {
    command: ['sh', '-c', 'exit 3'],
    tty: true,
    container: 'ns_a_01234567',
    cols: 80,
    rows: 24,
  });
  assert.deepEqual(parseExecRequest({ command: 'env' }).command, ['env']);
  badRequest(() => parseExecRequest({ cols: '80' }), /together/);
  badRequest(() => parseExecRequest({ cols: '0', rows: '24' }), /cols/);
  badRequest(() => parseExecRequest({ cols: '80', rows: 'x' }), /rows/);
  badRequest(() => parseExecRequest({ tty: 'maybe' }), /tty/);
  badRequest(() => parseExecRequest({ command: '' }), /program/);
  badRequest(() => parseExecRequest({ command: Array.from({ length: 257 }, () => 'a') }), /at most 256/);
  badRequest(() => parseExecRequest({ container: '' }), /container/);
});

test('client frames: stdin (base64), resize, stdin_close; anything else is refused with a reason', () => {
  const stdin = parseClientFrame(JSON.stringify({ type: 'stdin', data: Buffer.from('hi\n').toString('base64') }));
  assert.ok('type' in stdin && stdin.type === 'stdin');
  assert.equal(stdin.data.toString(), 'hi\n');
  assert.deepEqual(parseClientFrame('{"type":"resize","cols":120,"rows":40}'), { type: 'resize', cols: 120, rows: 40 });
  assert.deepEqual(parseClientFrame('{"type":"stdin_close"}'), { type: 'stdin_close' });
  for (const bad of ['nope', '[]', 'null', '{"type":"stdin"}', '{"type":"stdin","data":"***"}', '{"type":"stdin","data":"abc"}', '{"type":"resize","cols":0,"rows":1}', '{"type":"resize","cols":1.5,"rows":1}', '{"type":"kill"}', '{}']) {
    const frame = parseClientFrame(bad);
    assert.ok('invalid' in frame, bad);
  }
});

function observed(name: string, state: ObservedInstance['state']): ObservedInstance {
  return { id: `id-${name}`, name, deploymentId: 'd', specHash: 'h', state, exitCode: null, startedAt: null, finishedAt: null, address: null, imageDigest: null };
}

test('exec target: the named instance, else the first running one; unknown and not-running are told apart', () => {
  const list = [observed('ns_a_bbbbbbbb', 'running'), observed('ns_a_aaaaaaaa', 'running'), observed('ns_a_cccccccc', 'exited')];
  assert.deepEqual(execTarget(list, null), { instance: list[1] });
  assert.deepEqual(execTarget(list, 'ns_a_bbbbbbbb'), { instance: list[0] });
  assert.deepEqual(execTarget(list, 'id-ns_a_bbbbbbbb'), { instance: list[0] });
  assert.deepEqual(execTarget(list, 'ns_a_cccccccc'), { problem: 'not_running' });
  assert.deepEqual(execTarget(list, 'ns_a_zzzzzzzz'), { problem: 'unknown' });
  assert.deepEqual(execTarget([], null), { problem: 'not_running' });
});

function stats(n: number): InstanceStats {
  return {
    cpuUsagePercent: 1.234 * n,
    memory: { usageBytes: 100 * n, limitBytes: 1000 },
    network: { rxBytes: 10 * n, txBytes: 20 * n, rxPackets: n, txPackets: 2 * n },
    diskIo: { readBytes: 5 * n, writeBytes: 6 * n },
    pids: { current: n, limit: 100 },
  };
}

test('metrics: every field per instance, and totals that add up', () => {
  const metrics = buildDeploymentMetrics({ id: 'dep', name: 'web', restartCount: 2 }, [
    { instance: observed('ns_web_aaaaaaaa', 'running'), stats: stats(1) },
    { instance: observed('ns_web_bbbbbbbb', 'running'), stats: stats(2) },
  ]);
  assert.equal(metrics.deployment_id, 'dep');
  assert.equal(metrics.deployment_name, 'web');
  assert.equal(metrics.instance_count, 2);
  assert.ok(Math.abs(metrics.total_cpu_usage_percent - 3.702) < 1e-9);
  assert.deepEqual(metrics.total_memory, { usage_bytes: 300, limit_bytes: 2000, usage_percent: 15 });
  assert.deepEqual(metrics.total_network, { rx_bytes: 30, tx_bytes: 60, rx_packets: 3, tx_packets: 6 });
  assert.deepEqual(metrics.total_disk_io, { read_bytes: 15, write_bytes: 18 });
  assert.equal(metrics.total_pids, 3);
  assert.ok(Math.abs((metrics.instances[1]?.cpu_usage_percent ?? 0) - 2.468) < 1e-9);
  assert.deepEqual({ ...metrics.instances[1], cpu_usage_percent: 0 }, {
    instance_id: 'id-ns_web_bbbbbbbb',
    instance_name: 'ns_web_bbbbbbbb',
    cpu_usage_percent: 0,
    memory: { usage_bytes: 200, limit_bytes: 1000, usage_percent: 20 },
    network: { rx_bytes: 20, tx_bytes: 40, rx_packets: 2, tx_packets: 4 },
    disk_io: { read_bytes: 10, write_bytes: 12 },
    pids: { current: 2, limit: 100 },
    restart_count: 2,
  });
});

test('metrics without instances: zeros, never NaN (a zero limit has usage_percent 0)', () => {
  const metrics = buildDeploymentMetrics({ id: 'dep', name: 'web', restartCount: 0 }, []);
  assert.equal(metrics.instance_count, 0);
  assert.deepEqual(metrics.total_memory, { usage_bytes: 0, limit_bytes: 0, usage_percent: 0 });
  assert.equal(metrics.total_cpu_usage_percent, 0);
  assert.deepEqual(metrics.instances, []);
});
