// The deployments API over HTTP against the real server process and its SQLite file: apply (validation 400/422
// with every code reachable, automatic namespace, rolling-update child, force), list filters, namespace-restricted
// tokens, delete (idempotent, status_changed in the outbox), events and health-check filters, the streams' input
// checks, exec disabled by default, and no secret value in any response. Runs with whatever scheduler the server
// wires; it asserts only what the API itself guarantees.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDatabase, type Db } from '../../src/store/db.js';
import { appendEvent, appendHealthResult } from '../../src/store/deployments.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { cleanUp, runPrefix } from './deployments-api-support.js';

interface Deployment {
  id: string;
  name: string;
  namespace: string;
  status: string;
  kind: string;
  runtime: string;
  parent_id: string | null;
  restart_count: number;
  created_at: string;
  updated_at: string;
  replicas: number;
  instances: { id: string; address?: string }[];
  environment: Record<string, unknown>;
  config: Record<string, unknown>;
  [key: string]: unknown;
}

interface Problem {
  status: number;
  title: string;
  detail: string;
  violations: { property_path: string; message: string; code: string }[];
}

const PREFIX = runPrefix('c');
const NS_A = `${PREFIX}-a`;
const NS_B = `${PREFIX}-b`;
const REGISTRY_PASSWORD = 'd1t-registry-password-never-shown';

let server: TestServer;
let db: Db;

before(async () => {
  // The API alone: without a scheduler nothing purges a deleted deployment behind the test's back, so idempotent
  // DELETE is checked deterministically (the scheduler's purge is covered by the Docker tests).
  server = await startTestServer({ env: { SVC_SCHEDULER: 'off' } });
  db = openDatabase(server.dbPath);
});
after(async () => {
  db.close();
  await cleanUp(server, PREFIX);
});

function body(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'web', runtime: 'docker', namespace: NS_A, image: 'svc-test/busybox:latest', command: ['sleep', '3600'], replicas: 0, ...overrides };
}

async function apply(overrides: Record<string, unknown> = {}, query = '', token?: string) {
  return server.request<Deployment & Problem>('POST', `/deployments${query}`, { body: body(overrides), ...(token === undefined ? {} : { token }) });
}

function codes(problem: Problem): string[] {
  return problem.violations.map((v) => v.code).sort();
}

test('POST creates a pending deployment with every default, in a namespace created on the fly', async () => {
  const before = await server.request<{ name: string }[]>('GET', '/namespaces');
  assert.ok(!before.body.some((n) => n.name === NS_A));
  const created = await apply({ replicas: undefined, command: undefined, name: 'defaults', image: 'd1t-missing/image:none' });
  assert.equal(created.status, 201, created.text);
  const d = created.body;
  assert.match(d.id, /^[0-9a-f-]{36}$/);
  assert.equal(d.status, 'pending');
  assert.equal(d.restart_count, 0);
  assert.equal(d.kind, 'worker');
  assert.equal(d.replicas, 1);
  assert.equal(d.parent_id, null);
  assert.deepEqual(d.ports, []);
  assert.deepEqual(d.labels, {});
  assert.deepEqual(d.environment, {});
  assert.deepEqual(d.volumes, []);
  assert.deepEqual(d.health_checks, []);
  assert.deepEqual(d.network, { mode: 'bridge' });
  assert.deepEqual(d.config, { image_pull_policy: 'IfNotPresent' });
  assert.ok(Array.isArray(d.instances));
  assert.equal(d.command, undefined);
  assert.equal(d.created_at, d.updated_at);
  const namespaces = await server.request<{ name: string }[]>('GET', '/namespaces');
  assert.equal(namespaces.body.filter((n) => n.name === NS_A).length, 1);
  // A second deployment in the same namespace does not create it twice.
  assert.equal((await apply({ name: 'other' })).status, 201);
  assert.equal((await server.request<{ name: string }[]>('GET', '/namespaces')).body.filter((n) => n.name === NS_A).length, 1);
  const got = await server.request<Deployment>('GET', `/deployments/${d.id}`);
  assert.equal(got.status, 200);
  assert.equal(got.body.id, d.id);
  assert.equal(got.body.name, 'defaults');
});

test('validation: a malformed body is 400; each rule 1-9 gives its 422 code, all violations at once', async () => {
  for (const [label, payload] of [
    ['not JSON', '{"name":'],
    ['array', '[]'],
    ['missing image', JSON.stringify({ name: 'x', runtime: 'docker', namespace: NS_A })],
    ['wrong type', JSON.stringify(body({ replicas: 'two' }))],
    ['unknown field', JSON.stringify(body({ replica: 2 }))],
  ] as const) {
    const response = await server.request<Problem>('POST', '/deployments', { body: payload });
    assert.equal(response.status, 400, `${label}: ${response.text}`);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.deepEqual(response.body.violations, []);
  }

  const cases: [string, Record<string, unknown>, string[]][] = [
    ['rule 1', { runtime: 'podman' }, ['deployment.runtime.unsupported']],
    ['rule 2', { runtime: 'cloud-hypervisor', image: 'relative.img', command: ['x'] }, ['deployment.command.cloud_hypervisor_unsupported', 'deployment.image.cloud_hypervisor_requires_absolute_path']],
    ['rule 3 runtime', { runtime: 'cloud-hypervisor', image: '/img', command: undefined, network: { mode: 'host' } }, ['deployment.network.host_runtime_unsupported']],
    ['rule 3 ports', { network: { mode: 'host' }, ports: [{ published: 8080, target: 80 }] }, ['deployment.ports.host_network_conflict']],
    ['rule 3 replicas', { network: { mode: 'host' }, replicas: 2 }, ['deployment.replicas.host_network_conflict']],
    ['rule 4 range', { ports: [{ published: 0, target: 70000 }] }, ['deployment.ports.published.out_of_range', 'deployment.ports.target.out_of_range']],
    ['rule 4 duplicate', { ports: [{ published: 8080, target: 80 }, { published: 8080, target: 81 }] }, ['deployment.ports.published.duplicate']],
    ['rule 5', { ports: [{ published: 8080, target: 80 }], replicas: 3 }, ['deployment.ports.replicas_conflict', 'deployment.replicas.ports_conflict']],
    ['rule 6 replicas', { kind: 'job', replicas: 2 }, ['deployment.replicas.job_must_be_one']],
    ['rule 6 checks', { kind: 'job', replicas: 1, health_checks: [{ type: 'tcp', port: 80 }] }, ['deployment.health_checks.job_readiness_unsupported']],
    ['rule 7', { environment: { '1BAD': 'x', 'GOOD_1': 'y', 'bad-dash': 'z' } }, ['deployment.environment.key.invalid', 'deployment.environment.key.invalid']],
    ['rule 8', { resources: { limits: { cpu: 'lots', memory: '12XB' }, requests: { cpu: '-1', memory: 'big' } } }, ['deployment.resources.limits.cpu.invalid', 'deployment.resources.limits.memory.invalid', 'deployment.resources.requests.cpu.invalid', 'deployment.resources.requests.memory.invalid']],
    ['rule 9', { config: { image_pull_policy: 'Sometimes' } }, ['deployment.config.image_pull_policy.unsupported']],
  ];
  for (const [label, overrides, expected] of cases) {
    const response = await apply(overrides);
    assert.equal(response.status, 422, `${label}: ${response.text}`);
    assert.equal(response.body.title, 'Validation failed');
    assert.deepEqual(codes(response.body), [...expected].sort(), label);
    assert.equal(response.body.detail, response.body.violations.map((v) => `${v.property_path}: ${v.message}`).join('\n'));
  }

  // Rule 5 names both fields; every violation of one body comes back in one answer.
  const both = await apply({ ports: [{ published: 8080, target: 80 }], replicas: 2 });
  assert.deepEqual(both.body.violations.map((v) => v.property_path).sort(), ['ports', 'replicas']);
  const many = await apply({ runtime: 'podman', environment: { '9x': 'a' }, config: { image_pull_policy: 'No' }, kind: 'job', replicas: 2 });
  assert.deepEqual(codes(many.body), [
    'deployment.config.image_pull_policy.unsupported',
    'deployment.environment.key.invalid',
    'deployment.replicas.job_must_be_one',
    'deployment.runtime.unsupported',
  ]);
  // None of these created anything.
  const listed = await server.request<Deployment[]>('GET', `/deployments?namespace=${NS_A}`);
  assert.ok(listed.body.every((d) => ['defaults', 'other'].includes(d.name)), JSON.stringify(listed.body.map((d) => d.name)));
  assert.equal((await apply({}, '?force=maybe')).status, 400);
});

test('reusing name and namespace creates a child carrying parent_id; force=true is accepted', async () => {
  const first = await apply({ name: 'rolling' });
  assert.equal(first.status, 201);
  const second = await apply({ name: 'rolling', image: 'svc-test/busybox:v2' });
  assert.equal(second.status, 201);
  assert.equal(second.body.parent_id, first.body.id);
  assert.notEqual(second.body.id, first.body.id);
  const third = await apply({ name: 'rolling', image: 'svc-test/busybox:v3' }, '?force=true');
  assert.equal(third.status, 201);
  assert.equal(third.body.parent_id, second.body.id);
  const row = db.prepare('SELECT force FROM deployments WHERE id = ?').get(third.body.id) as { force: number };
  assert.equal(row.force, 1, 'force is recorded for the scheduler');
  // Same name in another namespace is a new deployment, not a child.
  const elsewhere = await apply({ name: 'rolling', namespace: NS_B });
  assert.equal(elsewhere.status, 201);
  assert.equal(elsewhere.body.parent_id, null);
  const got = await server.request<Deployment>('GET', `/deployments/${second.body.id}`);
  assert.equal(got.body.parent_id, first.body.id);
});

test('list: namespace, status and kind filters in the single and [] forms; bad values are 400', async () => {
  const job = await apply({ name: 'batch', namespace: NS_B, kind: 'job', replicas: 1, command: ['true'] });
  assert.equal(job.status, 201, job.text);
  const ids = async (query: string) => {
    const response = await server.request<Deployment[]>('GET', `/deployments${query}`);
    assert.equal(response.status, 200, `${query}: ${response.text}`);
    return response.body;
  };
  const inA = await ids(`?namespace=${NS_A}`);
  assert.ok(inA.length >= 3 && inA.every((d) => d.namespace === NS_A));
  const inBoth = await ids(`?namespace[]=${NS_A}&namespace[]=${NS_B}`);
  assert.equal(inBoth.length, inA.length + (await ids(`?namespace=${NS_B}`)).length);
  const jobs = await ids(`?kind=job&namespace=${NS_B}`);
  assert.deepEqual(jobs.map((d) => d.name), ['batch']);
  assert.equal((await ids(`?kind[]=worker&kind[]=job&namespace=${NS_B}`)).length, (await ids(`?namespace=${NS_B}`)).length);
  const workers = await ids(`?kind=worker&namespace=${NS_B}`);
  assert.ok(workers.every((d) => d.kind === 'worker'));

  db.prepare("UPDATE deployments SET status = 'failed' WHERE id = ?").run(job.body.id);
  assert.deepEqual((await ids(`?status=failed&namespace=${NS_B}`)).map((d) => d.id), [job.body.id]);
  const mixed = await ids(`?status[]=failed&status[]=pending&status[]=running&status[]=creating&namespace=${NS_B}`);
  assert.equal(mixed.length, (await ids(`?namespace=${NS_B}`)).length);
  assert.deepEqual(await ids(`?status=completed&namespace=${NS_B}`), []);

  for (const query of ['?status=sleeping', '?status[]=running&status[]=nope', '?kind=daemon', '?kind[]=', '?namespace=']) {
    const response = await server.request<Problem>('GET', `/deployments${query}`);
    assert.equal(response.status, 400, query);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  }
});

test('namespace-restricted tokens: see, read, apply and delete only in their namespaces', async () => {
  const inB = (await apply({ name: 'guarded', namespace: NS_B })).body;
  const reader = (await server.createToken({ scopes: ['deployments:read'], namespaces: [NS_A] })).token;
  const writer = (await server.createToken({ scopes: ['deployments:write', 'deployments:read'], namespaces: [NS_A] })).token;

  const listed = await server.request<Deployment[]>('GET', '/deployments', { token: reader });
  assert.equal(listed.status, 200);
  assert.ok(listed.body.length > 0 && listed.body.every((d) => d.namespace === NS_A));
  assert.equal((await server.request('GET', `/deployments?namespace=${NS_B}`, { token: reader })).status, 403);
  assert.equal((await server.request('GET', `/deployments/${inB.id}`, { token: reader })).status, 403);
  for (const sub of ['events', 'health-checks', 'metrics', 'logs']) {
    assert.equal((await server.request('GET', `/deployments/${inB.id}/${sub}`, { token: reader })).status, 403, sub);
  }
  assert.equal((await server.request('DELETE', `/deployments/${inB.id}`, { token: writer })).status, 403);
  assert.notEqual((await server.request<Deployment>('GET', `/deployments/${inB.id}`)).body.status, 'deleted', 'unchanged');

  const denied = await apply({ name: 'sneaky', namespace: NS_B }, '', writer);
  assert.equal(denied.status, 403);
  // 403 comes before the rules: nothing about the body is revealed for a foreign namespace.
  assert.equal((await apply({ name: 'sneaky', namespace: NS_B, runtime: 'podman' }, '', writer)).status, 403);
  const allowed = await apply({ name: 'mine' }, '', writer);
  assert.equal(allowed.status, 201);
  assert.equal((await apply({ name: 'mine' }, '', reader)).status, 403, 'deployments:read cannot apply');
  assert.equal((await server.request('DELETE', `/deployments/${allowed.body.id}`, { token: reader })).status, 403);
  assert.equal((await server.request('DELETE', `/deployments/${allowed.body.id}`, { token: writer })).status, 204);
});

test('DELETE marks deleted (status_changed in the outbox), is idempotent, and unknown ids are 404', async () => {
  const d = (await apply({ name: 'doomed' })).body;
  const removed = await server.request('DELETE', `/deployments/${d.id}`);
  assert.equal(removed.status, 204);
  assert.equal(removed.text, '');
  const got = await server.request<Deployment>('GET', `/deployments/${d.id}`);
  assert.equal(got.status, 200, got.text);
  assert.equal(got.body.status, 'deleted');
  const events = db.prepare("SELECT payload FROM events WHERE deployment_id = ? AND kind = 'deployment.status_changed'").all(d.id) as { payload: string }[];
  assert.equal(events.length >= 1, true);
  const payloads = events.map((e) => JSON.parse(e.payload) as Record<string, unknown>);
  const toDeleted = payloads.find((p) => p.new_status === 'deleted');
  assert.ok(toDeleted, JSON.stringify(payloads));
  assert.equal(toDeleted.schema_version, 1);
  assert.equal(toDeleted.deployment_id, d.id);
  assert.equal(toDeleted.namespace, NS_A);
  assert.equal(toDeleted.name, 'doomed');
  assert.equal(toDeleted.kind, 'worker');
  assert.equal((await server.request('DELETE', `/deployments/${d.id}`)).status, 204, 'deleting again is 204');
  const after = db.prepare("SELECT COUNT(*) AS n FROM events WHERE deployment_id = ? AND kind = 'deployment.status_changed'").get(d.id) as { n: number };
  assert.equal(after.n, events.length, 'a repeated delete enqueues nothing');
  const unknown = '00000000-0000-4000-8000-000000000000';
  for (const [method, path] of [
    ['GET', `/deployments/${unknown}`],
    ['DELETE', `/deployments/${unknown}`],
    ['GET', `/deployments/${unknown}/logs`],
    ['GET', `/deployments/${unknown}/events`],
    ['GET', `/deployments/${unknown}/health-checks`],
    ['GET', `/deployments/${unknown}/metrics`],
  ] as const) {
    const response = await server.request<Problem>(method, path);
    assert.equal(response.status, 404, `${method} ${path}`);
    assert.match(response.body.detail, /deployment '.*' not found/);
  }
  assert.equal((await server.request('GET', `/deployments/${'x'.repeat(65)}`)).status, 400);
});

test('events: level filter (single and []), limit, newest first; bad values are 400', async () => {
  const d = (await apply({ name: 'evented' })).body;
  const base = Date.now() - 60_000;
  const levels = ['info', 'warning', 'error', 'info', 'info'] as const;
  levels.forEach((level, i) =>
    appendEvent(db, { deploymentId: d.id, level, component: 'scheduler', reason: 'ScaleUp', message: `event ${i}` }, new Date(base + i * 1000)),
  );
  const all = await server.request<{ message: string; level: string; deployment_id: string; id: string; timestamp: string; component: string; reason: string }[]>(
    'GET',
    `/deployments/${d.id}/events`,
  );
  assert.equal(all.status, 200);
  const mine = all.body.filter((e) => e.message.startsWith('event '));
  assert.deepEqual(mine.map((e) => e.message), ['event 4', 'event 3', 'event 2', 'event 1', 'event 0']);
  assert.deepEqual(Object.keys(mine[0] ?? {}).sort(), ['component', 'deployment_id', 'id', 'level', 'message', 'reason', 'timestamp']);
  const errors = await server.request<{ level: string }[]>('GET', `/deployments/${d.id}/events?level=error`);
  assert.deepEqual(errors.body.map((e) => e.level), ['error']);
  const serious = await server.request<{ level: string }[]>('GET', `/deployments/${d.id}/events?level[]=error&level[]=warning`);
  assert.deepEqual(serious.body.map((e) => e.level).sort(), ['error', 'warning']);
  const limited = await server.request<{ message: string }[]>('GET', `/deployments/${d.id}/events?limit=2`);
  assert.equal(limited.body.length, 2);
  for (const query of ['level=debug', 'limit=0', 'limit=1001', 'limit=abc', 'limit=1&limit=2']) {
    assert.equal((await server.request('GET', `/deployments/${d.id}/events?${query}`)).status, 400, query);
  }
});

test('health checks: limit and latest=true (newest result per instance and check)', async () => {
  const d = (await apply({ name: 'probed', health_checks: [{ type: 'tcp', port: 80 }] })).body;
  const base = Date.now() - 60_000;
  const at = (i: number) => new Date(base + i * 1000).toISOString();
  let i = 0;
  for (const instance of ['i1', 'i2']) {
    for (const status of ['failure', 'success', 'timeout'] as const) {
      appendHealthResult(
        db,
        { deployment_id: d.id, instance_id: instance, check_index: 0, check_type: 'tcp', status, message: status === 'success' ? null : 'refused', started_at: at(i), finished_at: at(i) },
        new Date(base + i * 1000),
      );
      i += 1;
    }
  }
  const all = await server.request<{ status: string; check_type: string; instance_id: string; created_at: string; started_at: string; finished_at: string; message: string | null; id: string; deployment_id: string }[]>(
    'GET',
    `/deployments/${d.id}/health-checks`,
  );
  assert.equal(all.status, 200);
  assert.equal(all.body.length, 6);
  const first = all.body[0];
  assert.ok(first);
  for (const key of ['id', 'deployment_id', 'check_type', 'status', 'message', 'created_at', 'started_at', 'finished_at']) assert.ok(key in first, key);
  assert.equal(first.deployment_id, d.id);
  const latest = await server.request<{ instance_id: string; status: string }[]>('GET', `/deployments/${d.id}/health-checks?latest=true`);
  assert.deepEqual(latest.body.map((r) => `${r.instance_id}:${r.status}`).sort(), ['i1:timeout', 'i2:timeout']);
  assert.equal((await server.request<unknown[]>('GET', `/deployments/${d.id}/health-checks?limit=4`)).body.length, 4);
  assert.equal((await server.request<unknown[]>('GET', `/deployments/${d.id}/health-checks?latest=false&limit=1`)).body.length, 1);
  for (const query of ['latest=yes', 'limit=-1', 'limit=100000']) {
    assert.equal((await server.request('GET', `/deployments/${d.id}/health-checks?${query}`)).status, 400, query);
  }
});

test('secrets never leave the service: registry password dropped, secretRef shown as a reference', async () => {
  const created = await apply({
    name: 'private',
    environment: { PLAIN: 'visible', TOKEN: { secretRef: 'api-token' } },
    config: { image_pull_policy: 'Never', registry_auth: { username: 'bot', password: REGISTRY_PASSWORD, server_address: 'registry.example' }, user: 'nobody' },
  });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.body.environment, { PLAIN: 'visible', TOKEN: { secretRef: 'api-token' } });
  assert.deepEqual(created.body.config, { image_pull_policy: 'Never', registry_auth: { username: 'bot', server_address: 'registry.example' }, user: 'nobody' });
  for (const path of ['/deployments', `/deployments/${created.body.id}`, `/deployments?namespace=${NS_A}`, `/deployments/${created.body.id}/events`]) {
    const response = await server.request('GET', path);
    assert.ok(!response.text.includes(REGISTRY_PASSWORD), path);
  }
  const child = await apply({ name: 'private', config: { image_pull_policy: 'Never', registry_auth: { username: 'bot', password: REGISTRY_PASSWORD } } });
  assert.ok(!child.text.includes(REGISTRY_PASSWORD));
  assert.ok(!server.stdout().includes(REGISTRY_PASSWORD) && !server.stderr().includes(REGISTRY_PASSWORD), 'not in the server log either');
});

test('streams and metrics: bad input is 400 before anything is read; exec is 501 until enabled', async () => {
  const d = (await apply({ name: 'streams' })).body;
  for (const query of ['tail=-1', 'tail=10001', 'tail=x', 'since=yesterday', 'since=2026-01-01', 'follow=yes', 'container=']) {
    const response = await server.request<Problem>('GET', `/deployments/${d.id}/logs?${query}`);
    assert.equal(response.status, 400, `${query}: ${response.text}`);
  }
  const unknownContainer = await server.request<Problem>('GET', `/deployments/${d.id}/logs?container=${NS_A}_streams_deadbeef`);
  assert.equal(unknownContainer.status, 404);
  const metrics = await server.request<Record<string, unknown>>('GET', `/deployments/${d.id}/metrics`);
  assert.equal(metrics.status, 200);
  assert.equal(metrics.body.deployment_id, d.id);
  assert.equal(metrics.body.deployment_name, 'streams');
  for (const key of ['instance_count', 'total_cpu_usage_percent', 'total_memory', 'total_network', 'total_disk_io', 'total_pids', 'instances']) {
    assert.ok(key in metrics.body, key);
  }

  const exec = await server.request<Problem>('GET', `/deployments/${d.id}/exec?command=sh`);
  assert.equal(exec.status, 501);
  assert.match(exec.body.detail, /\[server\.exec\] enabled = true/);
  const nonAdmin = (await server.createToken({ scopes: ['deployments:read', 'deployments:write'] })).token;
  assert.equal((await server.request('GET', `/deployments/${d.id}/exec`, { token: nonAdmin })).status, 403);
});

test('bad input never gives a 500: wrong types and odd values anywhere in the body are 400 or 422', async () => {
  const odd: Record<string, unknown>[] = [
    { ports: 'x' }, { ports: [1] }, { ports: [{ published: '80', target: 80 }] }, { ports: [{ published: 80 }] },
    { environment: [] }, { environment: { A: 1 } }, { environment: { A: { secretRef: 5 } } }, { environment: { A: { other: 'x' } } },
    { volumes: [{}] }, { volumes: 'x' }, { volumes: [{ type: 'nfs', source: 'a', destination: '/a', driver: 'local', permission: 'rw' }] },
    { health_checks: [{ type: 'tcp' }] }, { health_checks: [{ type: 'smoke' }] }, { health_checks: {} },
    { resources: 5 }, { resources: { limits: { cpu: true } } }, { labels: { a: 1 } }, { labels: ['a'] },
    { config: [] }, { config: { registry_auth: 'x' } }, { network: 'host' }, { network: { mode: 7 } },
    { command: [1] }, { command: 'sh' }, { command: [] }, { replicas: 1e20 }, { replicas: -1 }, { replicas: 1.5 },
    { name: '' }, { name: 'UPPER' }, { name: 'x'.repeat(300) }, { namespace: 'a' }, { namespace: '-bad-' }, { image: '' },
    { image: 'has space' }, { kind: 'daemon' }, { runtime: 5 }, { name: '\ud800' },
  ];
  for (const overrides of odd) {
    const response = await apply(overrides);
    assert.ok(response.status === 400 || response.status === 422, `${JSON.stringify(overrides)}: ${response.status} ${response.text}`);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  }
  const polluted = await server.request('POST', '/deployments', { body: `{"__proto__":{"polluted":true},${JSON.stringify(body()).slice(1)}` });
  assert.equal(polluted.status, 400, polluted.text);
  assert.equal((await server.request('GET', '/healthz')).status, 200);
});
