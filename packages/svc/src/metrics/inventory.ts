// Inventory series (spec "Metrics series"): counts read from the database at each scrape. Every known status
// value is emitted, at 0 when absent, so dashboards and alerts never see a series appear or vanish.
import type { Db } from '../store/db.js';
import { prepared } from '../store/prepared.js';
import type { MetricFamily, Sample } from './exposition.js';
import { DEPLOYMENT_STATUSES, RUNTIMES } from '../domain/deployment.js';
import { DELIVERY_STATUSES } from '../store/outbox.js';

export const DEPLOYMENT_STATUS_VALUES = DEPLOYMENT_STATUSES;
export const RUNTIME_VALUES = RUNTIMES;
/** Outbound webhook queue: `pending` = queue depth, `dead` = dead letters. */
export const EVENT_DELIVERY_STATUS_VALUES = DELIVERY_STATUSES;
/** DESIGN.md: the health-check result statuses. */
export const HEALTH_CHECK_STATUS_VALUES = ['success', 'failure', 'timeout'] as const;

/** Raw counts as read; pure `inventoryFamilies` turns them into series. */
export interface InventoryCounts {
  deploymentsByStatus: ReadonlyMap<string, number>;
  deploymentsByRuntime: ReadonlyMap<string, number>;
  eventsByStatus: ReadonlyMap<string, number>;
  healthChecksByStatus: ReadonlyMap<string, number>;
  namespaces: number;
  secrets: number;
  volumes: number;
  users: number;
  webhooks: number;
  configs: number;
}

function byLabel(label: string, known: readonly string[], counts: ReadonlyMap<string, number>): Sample[] {
  // Known values first in their documented order, then anything unexpected the database holds.
  const values = [...known, ...[...counts.keys()].filter((v) => !known.includes(v)).sort()];
  return values.map((value) => ({ labels: { [label]: value }, value: counts.get(value) ?? 0 }));
}

function gauge(name: string, help: string, samples: Sample[]): MetricFamily {
  return { name, help, type: 'gauge', samples };
}

const single = (value: number): Sample[] => [{ labels: {}, value }];

export function inventoryFamilies(counts: InventoryCounts): MetricFamily[] {
  const total = [...counts.deploymentsByStatus.values()].reduce((a, b) => a + b, 0);
  return [
    gauge('svc_deployments', 'Deployments stored, in any status.', single(total)),
    gauge('svc_deployments_by_status', 'Deployments per status.', byLabel('status', DEPLOYMENT_STATUS_VALUES, counts.deploymentsByStatus)),
    gauge('svc_deployments_by_runtime', 'Deployments per runtime.', byLabel('runtime', RUNTIME_VALUES, counts.deploymentsByRuntime)),
    gauge(
      'svc_events_by_status',
      'Webhook deliveries per status (pending = outbound queue depth, dead = dead letters).',
      byLabel('status', EVENT_DELIVERY_STATUS_VALUES, counts.eventsByStatus),
    ),
    gauge(
      'svc_health_checks_by_status',
      'Stored health-check results per status.',
      byLabel('status', HEALTH_CHECK_STATUS_VALUES, counts.healthChecksByStatus),
    ),
    gauge('svc_namespaces', 'Namespaces.', single(counts.namespaces)),
    gauge('svc_secrets', 'Secrets.', single(counts.secrets)),
    gauge('svc_volumes', 'Volumes.', single(counts.volumes)),
    gauge('svc_users', 'Users.', single(counts.users)),
    gauge('svc_webhooks', 'Webhooks not revoked.', single(counts.webhooks)),
    gauge('svc_configs', 'Configs.', single(counts.configs)),
  ];
}

/**
 * Reads the counts. Each query is an aggregate over an indexed or small table. Every table is created by
 * store/migrations, which the server applies before it answers a scrape, so no schema probing is needed here.
 */
export function readInventory(db: Db): InventoryCounts {
  const grouped = (table: string, column: string): Map<string, number> => {
    const rows = prepared<[], { value: unknown; n: number }>(db, `SELECT ${column} AS value, count(*) AS n FROM ${table} GROUP BY ${column}`).all();
    return new Map(rows.map((r) => [String(r.value), r.n]));
  };
  const count = (table: string, where = ''): number => {
    const row = prepared<[], { n: number }>(db, `SELECT count(*) AS n FROM ${table} ${where}`).get();
    return row?.n ?? 0;
  };

  return {
    deploymentsByStatus: grouped('deployments', 'status'),
    deploymentsByRuntime: grouped('deployments', 'runtime'),
    eventsByStatus: grouped('event_deliveries', 'status'),
    healthChecksByStatus: grouped('health_check_results', 'status'),
    namespaces: count('namespaces'),
    secrets: count('secrets'),
    volumes: count('volumes'),
    users: count('users'),
    webhooks: count('webhooks', 'WHERE revoked_at IS NULL'),
    configs: count('configs'),
  };
}
