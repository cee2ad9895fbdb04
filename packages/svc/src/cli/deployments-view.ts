// Pure decisions and rendering over deployment records: client-side filters, the prune rule, table rows.
import { isDeploymentStatus, PRUNED_BY_DEFAULT_STATUSES } from '../domain/deployment.js';
import { formatTime, paint, statusColor, strings, sub, text, type ApiRecord } from './output.js';

export function selectPrunable(deployments: readonly ApiRecord[], all: boolean): ApiRecord[] {
  // The one list of the spec's prune rule lives in the domain; the CLI only applies it to what the API returned.
  return deployments.filter((d) => {
    const status = d.status;
    return all || (isDeploymentStatus(status) && PRUNED_BY_DEFAULT_STATUSES.has(status));
  });
}

export interface LabelSelector {
  key: string;
  /** Absent: the key must merely exist. */
  value?: string;
}

export function parseLabelSelector(raw: string): LabelSelector {
  const eq = raw.indexOf('=');
  if (eq === -1) return { key: raw };
  return { key: raw.slice(0, eq), value: raw.slice(eq + 1) };
}

export function matchesLabels(deployment: ApiRecord, selectors: readonly LabelSelector[]): boolean {
  const labels = sub(deployment, 'labels');
  return selectors.every((s) => {
    if (!Object.hasOwn(labels, s.key)) return false;
    return s.value === undefined || labels[s.key] === s.value;
  });
}

export interface ListFilter {
  namespace?: string;
  statuses: readonly string[];
  kind?: string;
  labels: readonly LabelSelector[];
}

/** Applied client-side as well, so the result is right whatever filters the server honoured. */
export function filterDeployments(deployments: readonly ApiRecord[], filter: ListFilter): ApiRecord[] {
  return deployments.filter(
    (d) =>
      (filter.namespace === undefined || text(d, 'namespace', '') === filter.namespace) &&
      (filter.statuses.length === 0 || filter.statuses.includes(text(d, 'status', ''))) &&
      (filter.kind === undefined || text(d, 'kind', 'worker') === filter.kind) &&
      matchesLabels(d, filter.labels),
  );
}

export const LIST_HEADERS = ['Id', 'Created at (UTC)', 'Updated at (UTC)', 'Namespace', 'Name', 'Image', 'Runtime', 'Kind', 'Replicas', 'Status'] as const;

export function replicasCell(deployment: ApiRecord): string {
  const instances = Array.isArray(deployment.instances) ? deployment.instances.length : 0;
  const desired = typeof deployment.replicas === 'number' ? deployment.replicas : 1;
  // The spec marks autoscaled deployments with `*`; the API shows no autoscaling field yet, so this only
  // triggers if the server sends `autoscaling` (any truthy value).
  return `${instances}/${desired}${deployment.autoscaling ? '*' : ''}`;
}

export function listRow(deployment: ApiRecord, color: boolean): string[] {
  const status = text(deployment, 'status');
  return [
    text(deployment, 'id'),
    formatTime(deployment.created_at),
    formatTime(deployment.updated_at),
    text(deployment, 'namespace'),
    text(deployment, 'name'),
    text(deployment, 'image'),
    text(deployment, 'runtime'),
    text(deployment, 'kind', 'worker'),
    replicasCell(deployment),
    paint(status, statusColor(status), color),
  ];
}

export function labelsOf(deployment: ApiRecord): string[] {
  return Object.entries(sub(deployment, 'labels')).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
}

export { strings };
