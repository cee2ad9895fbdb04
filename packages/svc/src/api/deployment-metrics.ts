// The Deployment metrics object of `GET /deployments/{id}/metrics` (spec "Deployment metrics"), built from the
// stats of each running instance. Pure: the route reads the stats (in parallel, bounded in time) and passes them in.
import type { InstanceStats, ObservedInstance } from '../runtime/runtime.js';

export interface MemoryMetrics {
  usage_bytes: number;
  limit_bytes: number;
  usage_percent: number;
}

export interface NetworkMetrics {
  rx_bytes: number;
  tx_bytes: number;
  rx_packets: number;
  tx_packets: number;
}

export interface DiskIoMetrics {
  read_bytes: number;
  write_bytes: number;
}

export interface InstanceMetrics {
  instance_id: string;
  instance_name: string;
  cpu_usage_percent: number;
  memory: MemoryMetrics;
  network: NetworkMetrics;
  disk_io: DiskIoMetrics;
  pids: { current: number; limit: number };
  restart_count: number;
}

export interface DeploymentMetrics {
  deployment_id: string;
  deployment_name: string;
  instance_count: number;
  total_cpu_usage_percent: number;
  total_memory: MemoryMetrics;
  total_network: NetworkMetrics;
  total_disk_io: DiskIoMetrics;
  total_pids: number;
  instances: InstanceMetrics[];
}

export interface MeasuredInstance {
  instance: ObservedInstance;
  stats: InstanceStats;
}

/** Unrounded (a small container is a few hundredths of a percent of host memory); never NaN or Infinity. */
function percentage(value: number): number {
  return Number.isFinite(value) ? value : 0;
}

function memory(usage: number, limit: number): MemoryMetrics {
  return { usage_bytes: usage, limit_bytes: limit, usage_percent: limit > 0 ? percentage((usage / limit) * 100) : 0 };
}

/**
 * `restartCount` is the deployment's: svc replaces a crashed instance with a new one rather than restarting it in
 * place, so the unplanned exits of the deployment are the restarts that led to each current instance.
 */
export function buildDeploymentMetrics(
  deployment: { id: string; name: string; restartCount: number },
  measured: readonly MeasuredInstance[],
): DeploymentMetrics {
  const instances = measured.map(({ instance, stats }): InstanceMetrics => ({
    instance_id: instance.id,
    instance_name: instance.name,
    cpu_usage_percent: percentage(stats.cpuUsagePercent),
    memory: memory(stats.memory.usageBytes, stats.memory.limitBytes),
    network: {
      rx_bytes: stats.network.rxBytes,
      tx_bytes: stats.network.txBytes,
      rx_packets: stats.network.rxPackets,
      tx_packets: stats.network.txPackets,
    },
    disk_io: { read_bytes: stats.diskIo.readBytes, write_bytes: stats.diskIo.writeBytes },
    pids: { current: stats.pids.current, limit: stats.pids.limit },
    restart_count: deployment.restartCount,
  }));
  const sum = (pick: (i: InstanceMetrics) => number) => instances.reduce((total, i) => total + pick(i), 0);
  return {
    deployment_id: deployment.id,
    deployment_name: deployment.name,
    instance_count: instances.length,
    total_cpu_usage_percent: percentage(sum((i) => i.cpu_usage_percent)),
    total_memory: memory(sum((i) => i.memory.usage_bytes), sum((i) => i.memory.limit_bytes)),
    total_network: {
      rx_bytes: sum((i) => i.network.rx_bytes),
      tx_bytes: sum((i) => i.network.tx_bytes),
      rx_packets: sum((i) => i.network.rx_packets),
      tx_packets: sum((i) => i.network.tx_packets),
    },
    total_disk_io: { read_bytes: sum((i) => i.disk_io.read_bytes), write_bytes: sum((i) => i.disk_io.write_bytes) },
    total_pids: sum((i) => i.pids.current),
    instances,
  };
}
