import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuPercent, memoryUsage, toInstanceStats } from '../../src/runtime/docker/stats.js';

const cgroupV2Body = {
  cpu_stats: { cpu_usage: { total_usage: 2_000_000_000 }, system_cpu_usage: 20_000_000_000, online_cpus: 2 },
  precpu_stats: { cpu_usage: { total_usage: 1_000_000_000 }, system_cpu_usage: 10_000_000_000 },
  memory_stats: { usage: 50_000_000, limit: 268_435_456, stats: { inactive_file: 10_000_000 } },
  networks: {
    eth0: { rx_bytes: 1000, tx_bytes: 500, rx_packets: 10, tx_packets: 5 },
    eth1: { rx_bytes: 24, tx_bytes: 6, rx_packets: 1, tx_packets: 2 },
  },
  blkio_stats: {
    io_service_bytes_recursive: [
      { major: 8, minor: 0, op: 'read', value: 4096 },
      { major: 8, minor: 0, op: 'write', value: 8192 },
      { major: 8, minor: 16, op: 'Read', value: 4 },
    ],
  },
  pids_stats: { current: 3, limit: 512 },
};

test('CPU percent is delta(container)/delta(system) × online CPUs × 100', () => {
  assert.equal(cpuPercent(cgroupV2Body), 20);
  const perCpu = { ...cgroupV2Body, cpu_stats: { cpu_usage: { total_usage: 2_000_000_000, percpu_usage: [1, 1, 1, 1] }, system_cpu_usage: 20_000_000_000 } };
  assert.equal(cpuPercent(perCpu), 40, 'falls back to the number of per-CPU counters');
  assert.equal(cpuPercent({ ...cgroupV2Body, precpu_stats: {} }), 20, 'an empty first sample reads as usage since boot, as docker stats does');
  assert.equal(cpuPercent({ cpu_stats: {}, precpu_stats: {} }), 0);
  assert.equal(cpuPercent(null), 0);
});

test('memory usage excludes inactive page cache (v1 total_inactive_file, v2 inactive_file)', () => {
  assert.equal(memoryUsage(cgroupV2Body), 40_000_000);
  assert.equal(memoryUsage({ memory_stats: { usage: 100, stats: { total_inactive_file: 30, inactive_file: 99 } } }), 70);
  assert.equal(memoryUsage({ memory_stats: { usage: 100, stats: { inactive_file: 200 } } }), 100, 'never negative');
  assert.equal(memoryUsage({}), 0);
});

test('full stats: network summed over interfaces, blkio by op, pids', () => {
  assert.deepEqual(toInstanceStats(cgroupV2Body), {
    cpuUsagePercent: 20,
    memory: { usageBytes: 40_000_000, limitBytes: 268_435_456 },
    network: { rxBytes: 1024, txBytes: 506, rxPackets: 11, txPackets: 7 },
    diskIo: { readBytes: 4100, writeBytes: 8192 },
    pids: { current: 3, limit: 512 },
  });
});

test('missing sections (host network, no blkio) and the unlimited 2^64-1 sentinel read as zero', () => {
  const stats = toInstanceStats({ memory_stats: { usage: 10, limit: 2 ** 64 - 1 }, blkio_stats: { io_service_bytes_recursive: null }, pids_stats: { current: 1, limit: 2 ** 64 - 1 } });
  assert.deepEqual(stats.network, { rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 });
  assert.deepEqual(stats.diskIo, { readBytes: 0, writeBytes: 0 });
  assert.equal(stats.memory.limitBytes, 0);
  assert.deepEqual(stats.pids, { current: 1, limit: 0 });
});
