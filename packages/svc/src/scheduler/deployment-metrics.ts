// The per-deployment /metrics series, built from the scheduler's latest observation and the stats its background
// refresher cached. Pure; the scrape only reads what the refresher left (never the runtime).
// Series are keyed by (deployment name, namespace, runtime): during a rolling update parent and child share a
// name, and their instances add up, as a service would be counted.
import type { MetricFamily, Sample } from '../metrics/exposition.js';
import type { InstanceStats, ObservedInstance } from '../runtime/runtime.js';

export interface MetricsDeployment {
  id: string;
  name: string;
  namespace: string;
  runtime: string;
  restartCount: number;
}

interface Totals {
  labels: Record<string, string>;
  instances: number;
  cpu: number;
  memoryUsage: number;
  memoryLimit: number;
  pids: number;
  rx: number;
  tx: number;
  diskRead: number;
  diskWrite: number;
  restarts: number;
}

const SERIES: { name: string; help: string; type: 'gauge' | 'counter'; value: (t: Totals) => number }[] = [
  { name: 'svc_deployment_instances', help: 'Live instances of the deployment.', type: 'gauge', value: (t) => t.instances },
  { name: 'svc_deployment_cpu_usage_percent', help: 'CPU usage of all instances, percent of one core.', type: 'gauge', value: (t) => t.cpu },
  { name: 'svc_deployment_memory_usage_bytes', help: 'Memory used by all instances.', type: 'gauge', value: (t) => t.memoryUsage },
  { name: 'svc_deployment_memory_limit_bytes', help: 'Memory limit summed over instances.', type: 'gauge', value: (t) => t.memoryLimit },
  { name: 'svc_deployment_pids', help: 'Processes in all instances.', type: 'gauge', value: (t) => t.pids },
  { name: 'svc_deployment_network_rx_bytes_total', help: 'Bytes received by the instances.', type: 'counter', value: (t) => t.rx },
  { name: 'svc_deployment_network_tx_bytes_total', help: 'Bytes sent by the instances.', type: 'counter', value: (t) => t.tx },
  { name: 'svc_deployment_disk_read_bytes_total', help: 'Bytes read from block devices by the instances.', type: 'counter', value: (t) => t.diskRead },
  { name: 'svc_deployment_disk_write_bytes_total', help: 'Bytes written to block devices by the instances.', type: 'counter', value: (t) => t.diskWrite },
  { name: 'svc_deployment_restarts_total', help: 'Unplanned instance exits (restart_count).', type: 'counter', value: (t) => t.restarts },
];

function isLive(instance: ObservedInstance): boolean {
  return instance.state !== 'exited' && instance.state !== 'dead' && instance.state !== 'removing';
}

export function deploymentFamilies(
  deployments: readonly MetricsDeployment[],
  observed: readonly ObservedInstance[],
  stats: ReadonlyMap<string, InstanceStats>,
  lastRefresh: ReadonlyMap<string, number>,
): MetricFamily[] {
  const byDeployment = new Map<string, ObservedInstance[]>();
  for (const instance of observed) {
    if (!isLive(instance)) continue;
    const list = byDeployment.get(instance.deploymentId);
    if (list === undefined) byDeployment.set(instance.deploymentId, [instance]);
    else list.push(instance);
  }
  const totals = new Map<string, Totals>();
  for (const d of deployments) {
    const key = `${d.namespace}\u0000${d.name}\u0000${d.runtime}`;
    let t = totals.get(key);
    if (t === undefined) {
      t = {
        labels: { deployment: d.name, namespace: d.namespace, runtime: d.runtime },
        instances: 0, cpu: 0, memoryUsage: 0, memoryLimit: 0, pids: 0, rx: 0, tx: 0, diskRead: 0, diskWrite: 0, restarts: 0,
      };
      totals.set(key, t);
    }
    t.restarts += d.restartCount;
    for (const instance of byDeployment.get(d.id) ?? []) {
      t.instances += 1;
      const s = stats.get(instance.id);
      if (s === undefined) continue;
      t.cpu += s.cpuUsagePercent;
      t.memoryUsage += s.memory.usageBytes;
      t.memoryLimit += s.memory.limitBytes;
      t.pids += s.pids.current;
      t.rx += s.network.rxBytes;
      t.tx += s.network.txBytes;
      t.diskRead += s.diskIo.readBytes;
      t.diskWrite += s.diskIo.writeBytes;
    }
  }
  const families: MetricFamily[] = SERIES.map((series) => ({
    name: series.name,
    help: series.help,
    type: series.type,
    samples: [...totals.values()].map((t): Sample => ({ labels: t.labels, value: series.value(t) })),
  }));
  families.push({
    name: 'svc_runtime_last_refresh_seconds',
    help: 'Unix time (seconds) of the last completed background refresh of runtime stats.',
    type: 'gauge',
    samples: [...lastRefresh].map(([runtime, at]) => ({ labels: { runtime }, value: Math.floor(at / 1000) })),
  });
  return families;
}
