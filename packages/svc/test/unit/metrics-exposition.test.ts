import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderJson, renderPrometheus } from '../../src/metrics/exposition.js';
import { DEPLOYMENT_STATUS_VALUES, inventoryFamilies, type InventoryCounts } from '../../src/metrics/inventory.js';

const empty: InventoryCounts = {
  deploymentsByStatus: new Map(),
  deploymentsByRuntime: new Map(),
  eventsByStatus: new Map(),
  healthChecksByStatus: new Map(),
  namespaces: 0,
  secrets: 0,
  volumes: 0,
  users: 0,
  webhooks: 0,
  configs: 0,
};

test('every status value is emitted even at zero, and unknown stored values are kept', () => {
  const families = inventoryFamilies({ ...empty, deploymentsByStatus: new Map([['running', 2], ['weird', 1]]), users: 3 });
  const byStatus = families.find((f) => f.name === 'svc_deployments_by_status');
  assert.ok(byStatus);
  assert.deepEqual(byStatus.samples.map((s) => s.labels.status), [...DEPLOYMENT_STATUS_VALUES, 'weird']);
  assert.equal(byStatus.samples.find((s) => s.labels.status === 'running')?.value, 2);
  assert.equal(byStatus.samples.find((s) => s.labels.status === 'pending')?.value, 0);
  assert.equal(families.find((f) => f.name === 'svc_deployments')?.samples[0]?.value, 3);
  const events = families.find((f) => f.name === 'svc_events_by_status');
  assert.deepEqual(events?.samples.map((s) => s.labels.status), ['pending', 'delivered', 'dead']);
  const checks = families.find((f) => f.name === 'svc_health_checks_by_status');
  assert.deepEqual(checks?.samples.map((s) => s.labels.status), ['success', 'failure', 'timeout']);
  assert.deepEqual(
    families.map((f) => f.name),
    [
      'svc_deployments',
      'svc_deployments_by_status',
      'svc_deployments_by_runtime',
      'svc_events_by_status',
      'svc_health_checks_by_status',
      'svc_namespaces',
      'svc_secrets',
      'svc_volumes',
      'svc_users',
      'svc_webhooks',
      'svc_configs',
    ],
  );
});

test('Prometheus text 0.0.4: HELP, TYPE, escaped label values', () => {
  const text = renderPrometheus([
    { name: 'a_total', help: 'line\nbreak', type: 'counter', samples: [{ labels: { x: 'q"u\\o\nte' }, value: 1.5 }] },
    { name: 'b', help: 'h', type: 'gauge', samples: [{ labels: {}, value: NaN }] },
  ]);
  assert.equal(text, '# HELP a_total line\\nbreak\n# TYPE a_total counter\na_total{x="q\\"u\\\\o\\nte"} 1.5\n# HELP b h\n# TYPE b gauge\nb NaN\n');
});

test('JSON: numbers, label maps, and label lists for multi-label series', () => {
  const json = renderJson([
    { name: 'n', help: '', type: 'gauge', samples: [{ labels: {}, value: 4 }] },
    { name: 's', help: '', type: 'gauge', samples: [{ labels: { status: 'a' }, value: 1 }, { labels: { status: 'b' }, value: 0 }] },
    { name: 'm', help: '', type: 'gauge', samples: [{ labels: { d: 'x', ns: 'y' }, value: 2 }] },
    { name: 'e', help: '', type: 'gauge', samples: [] },
  ]);
  assert.deepEqual(json, { n: 4, s: { a: 1, b: 0 }, m: [{ labels: { d: 'x', ns: 'y' }, value: 2 }], e: 0 });
});
