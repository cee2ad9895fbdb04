// One `GET /containers/{id}/stats?stream=false` body → InstanceStats, computed the way `docker stats` does.
// Pure and defensive: the body is untyped JSON whose shape differs between cgroup v1 and v2.

import type { InstanceStats } from '../runtime.js';

function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** A finite, non-negative, safe integer-ish number, or 0 (Docker omits fields and writes 2^64-1 for "max"). */
function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER ? value : 0;
}

/** CPU % over the sampling window, scaled by online CPUs: 200 means two full cores (docker CLI semantics). */
export function cpuPercent(body: unknown): number {
  const cpuDelta = count(field(body, 'cpu_stats', 'cpu_usage', 'total_usage')) - count(field(body, 'precpu_stats', 'cpu_usage', 'total_usage'));
  const systemDelta = count(field(body, 'cpu_stats', 'system_cpu_usage')) - count(field(body, 'precpu_stats', 'system_cpu_usage'));
  let onlineCpus = count(field(body, 'cpu_stats', 'online_cpus'));
  if (onlineCpus === 0) {
    const perCpu = field(body, 'cpu_stats', 'cpu_usage', 'percpu_usage');
    onlineCpus = Array.isArray(perCpu) ? perCpu.length : 0;
  }
  if (cpuDelta <= 0 || systemDelta <= 0 || onlineCpus === 0) return 0;
  return (cpuDelta / systemDelta) * onlineCpus * 100;
}

/** Usage without reclaimable page cache: `total_inactive_file` (cgroup v1) or `inactive_file` (v2), as the CLI does. */
export function memoryUsage(body: unknown): number {
  const usage = count(field(body, 'memory_stats', 'usage'));
  const v1 = field(body, 'memory_stats', 'stats', 'total_inactive_file');
  const v2 = field(body, 'memory_stats', 'stats', 'inactive_file');
  const inactive = typeof v1 === 'number' ? count(v1) : count(v2);
  return inactive < usage ? usage - inactive : usage;
}

export function toInstanceStats(body: unknown): InstanceStats {
  const network = { rxBytes: 0, txBytes: 0, rxPackets: 0, txPackets: 0 };
  const interfaces = field(body, 'networks');
  if (typeof interfaces === 'object' && interfaces !== null) {
    for (const nic of Object.values(interfaces as Record<string, unknown>)) {
      network.rxBytes += count(field(nic, 'rx_bytes'));
      network.txBytes += count(field(nic, 'tx_bytes'));
      network.rxPackets += count(field(nic, 'rx_packets'));
      network.txPackets += count(field(nic, 'tx_packets'));
    }
  }
  const diskIo = { readBytes: 0, writeBytes: 0 };
  const entries = field(body, 'blkio_stats', 'io_service_bytes_recursive');
  if (Array.isArray(entries)) {
    for (const entry of entries) {
      const op = field(entry, 'op');
      if (typeof op !== 'string') continue;
      if (op.toLowerCase() === 'read') diskIo.readBytes += count(field(entry, 'value'));
      else if (op.toLowerCase() === 'write') diskIo.writeBytes += count(field(entry, 'value'));
    }
  }
  return {
    cpuUsagePercent: cpuPercent(body),
    memory: { usageBytes: memoryUsage(body), limitBytes: count(field(body, 'memory_stats', 'limit')) },
    network,
    diskIo,
    pids: { current: count(field(body, 'pids_stats', 'current')), limit: count(field(body, 'pids_stats', 'limit')) },
  };
}
