// Every status the Docker runtime can produce, reached for real by the scheduler against dockerd, plus the
// events and outbox entries that go with them. Namespaces `d2t-<random>`; everything is removed afterwards.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConfig } from '../../src/store/configs.js';
import { createSecret } from '../../src/store/secrets.js';
import { ensureNamespace } from '../../src/store/namespaces.js';
import { listHealthResults, markDeleted } from '../../src/store/deployments.js';
import { ensureBusyboxImage } from '../support/busybox-image.js';
import { SchedulerHarness, WORKER_COMMAND, cleanupNamespaces, docker, fileNamespace, testSpec } from './scheduler-support.js';

const namespaces: string[] = [];
let h: SchedulerHarness;

const ns = (): string => fileNamespace(namespaces);

before(async () => {
  await ensureBusyboxImage();
  h = SchedulerHarness.create({ intervalMs: 1_000 });
  h.scheduler.start();
});

after(async () => {
  await h.close();
  await cleanupNamespaces(namespaces);
});

test('worker: pending → creating → running; adopted container labelled, on svc_<ns> with the name alias; deleted then purged', async () => {
  const namespace = ns();
  const d = h.deploy(testSpec(namespace, { labels: { team: 'a', svc_deployment: 'hijack' } }));
  await h.waitFor(d.id, ['running']);
  const [id] = await h.containers(d.id);
  assert.ok(id);
  const info = JSON.parse(await docker('inspect', id)) as [
    { Name: string; Config: { Labels: Record<string, string> }; NetworkSettings: { Networks: Record<string, { Aliases: string[] | null }> } },
  ];
  assert.match(info[0].Name, new RegExp(`^/${namespace}_web_[0-9a-f]{8}$`));
  assert.equal(info[0].Config.Labels['svc_deployment'], d.id, 'our label is never overridden by a user label');
  assert.equal(info[0].Config.Labels['team'], 'a');
  assert.deepEqual(Object.keys(info[0].NetworkSettings.Networks), [`svc_${namespace}`]);
  assert.equal(h.scheduler.handle.instancesOf(d.id).length, 1);
  assert.deepEqual(
    h.outbox('deployment.status_changed', d.id).map((p) => [p.old_status, p.new_status]),
    [
      ['pending', 'creating'],
      ['creating', 'running'],
    ],
  );
  const scaled = h.outbox('deployment.scaled', d.id);
  assert.deepEqual(scaled.map((p) => [p.direction, p.instance_count, p.replicas]), [['up', 1, 1]]);
  assert.ok(h.reasons(d.id).includes('ScaleUp'));
  assert.ok(h.reasons(d.id).includes('Created'));
  await h.waitUntil('the Started event from the Docker event stream', () => h.reasons(d.id).includes('Started'), 10_000);

  markDeleted(h.db, d.id);
  h.scheduler.handle.nudge();
  await h.waitFor(d.id, ['purged'], 30_000);
  assert.deepEqual(await h.containers(d.id, true), []);
});

test('job exit 0 → completed; job exit 3 → failed; exited instance kept for its logs', async () => {
  const namespace = ns();
  const ok = h.deploy(testSpec(namespace, { name: 'ok', kind: 'job', command: ['sh', '-c', 'echo done'] }));
  const bad = h.deploy(testSpec(namespace, { name: 'bad', kind: 'job', command: ['sh', '-c', 'exit 3'] }));
  assert.equal(await h.waitFor(ok.id, ['completed', 'failed']), 'completed');
  assert.equal(await h.waitFor(bad.id, ['completed', 'failed']), 'failed');
  assert.ok(h.reasons(ok.id).includes('JobCompleted'));
  assert.ok(h.reasons(bad.id).includes('JobFailed'));
  assert.equal((await h.containers(bad.id, true)).length, 1);
  assert.equal(h.get(bad.id).restart_count, 0, 'a job is never restarted');
});

test('worker that keeps exiting → crash_loop_back_off at the 5th exit, with exponential restart delay', async () => {
  const namespace = ns();
  const d = h.deploy(testSpec(namespace, { name: 'crash', command: ['sh', '-c', 'exit 1'] }));
  await h.waitFor(d.id, ['crash_loop_back_off'], 90_000);
  const record = h.get(d.id);
  assert.equal(record.restart_count, 5);
  const last = h.outbox('deployment.status_changed', d.id).at(-1);
  assert.equal(last?.new_status, 'crash_loop_back_off');
  assert.equal(last?.restart_count, 5);
  assert.equal(h.reasons(d.id).filter((r) => r === 'Exited').length, 5);
  // Terminal: no more creations.
  const before = (await h.containers(d.id, true)).length;
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal((await h.containers(d.id, true)).length, before);
  assert.equal(h.get(d.id).status, 'crash_loop_back_off');
});

test('missing secret → failed with an error event; an existing secret reaches the container but no log, event or outbox entry', async () => {
  const namespace = ns();
  const missing = h.deploy(testSpec(namespace, { name: 'nosecret', environment: { TOKEN: { secretRef: 'absent' } } }));
  assert.equal(await h.waitFor(missing.id, ['failed', 'running']), 'failed');
  const events = h.db.prepare('SELECT level, reason, message FROM deployment_events WHERE deployment_id = ?').all(missing.id) as {
    level: string;
    reason: string;
    message: string;
  }[];
  assert.ok(events.some((e) => e.level === 'error' && e.reason === 'SecretNotFound' && e.message.includes("'absent'")));
  const error = h.outbox('deployment.error', missing.id)[0];
  assert.equal(error?.reason, 'failed');
  assert.equal(error?.category, 'user');

  const value = 'sup3r-s3cret-value-d2t';
  ensureNamespace(h.db, namespace);
  assert.equal(createSecret(h.db, h.box, { namespace, name: 'token', value }, new Date()).kind, 'created');
  const withSecret = h.deploy(
    testSpec(namespace, { name: 'withsecret', environment: { TOKEN: { secretRef: 'token' }, PLAIN: 'x' }, command: ['sh', '-c', 'echo "len=${#TOKEN}"; trap "exit 0" TERM; while true; do sleep 1; done'] }),
  );
  await h.waitFor(withSecret.id, ['running']);
  const [id] = await h.containers(withSecret.id);
  assert.ok(id);
  await h.waitUntil('log line', async () => (await docker('logs', id)).includes(`len=${value.length}`));
  const everything = JSON.stringify([
    h.db.prepare('SELECT * FROM deployment_events').all(),
    h.db.prepare('SELECT * FROM events').all(),
    h.db.prepare('SELECT spec FROM deployments').all(),
    h.logs,
  ]);
  assert.ok(!everything.includes(value), 'the secret value appears nowhere but inside the container');
});

test('missing config and missing key → config_error (retried with backoff); the rendered file is mounted read-only once fixed', async () => {
  const namespace = ns();
  ensureNamespace(h.db, namespace);
  const mount = { type: 'config' as const, source: 'app', destination: '/etc/app/level', driver: 'local', permission: 'ro' as const, key: 'level' };
  const noConfig = h.deploy(testSpec(namespace, { name: 'noconfig', volumes: [mount] }));
  assert.equal(await h.waitFor(noConfig.id, ['config_error', 'running']), 'config_error');
  assert.equal(h.get(noConfig.id).retry_count, 1);
  assert.ok((h.get(noConfig.id).backoff_until ?? 0) > Date.now());
  assert.equal(h.outbox('deployment.error', noConfig.id)[0]?.reason, 'config_error');

  assert.equal(createConfig(h.db, { namespace, name: 'other', data: '{"x":"1"}', labels: '' }, new Date()).kind, 'created');
  const noKey = h.deploy(testSpec(namespace, { name: 'nokey', volumes: [{ ...mount, source: 'other' }] }));
  assert.equal(await h.waitFor(noKey.id, ['config_error', 'running']), 'config_error');
  assert.ok(h.reasons(noKey.id).includes('ConfigError'));
  assert.ok(h.reasons(noKey.id).includes('BackOff'));

  // Once the config exists, the retry (after its 10 s backoff) runs the instance with the value as a file.
  assert.equal(createConfig(h.db, { namespace, name: 'app', data: '{"level":"debug"}', labels: '' }, new Date()).kind, 'created');
  assert.equal(await h.waitFor(noConfig.id, ['running'], 40_000), 'running');
  const [id] = await h.containers(noConfig.id);
  assert.ok(id);
  assert.equal(await docker('exec', id, 'cat', '/etc/app/level'), 'debug');
  await assert.rejects(docker('exec', id, 'sh', '-c', 'echo x > /etc/app/level'));
  assert.equal(readFileSync(join(h.dir, 'svc-data', 'configs', noConfig.id, '0'), 'utf8'), 'debug');
});

test('image missing with policy Never → image_pull_back_off; bad bind → file_system_error; missing executable → create_container_error; huge memory → insufficient_resources', async () => {
  const namespace = ns();
  const pull = h.deploy(testSpec(namespace, { name: 'nopull', image: 'svc-test/busybox:does-not-exist' }));
  // Docker refuses a relative bind source when creating the container: a volume fault.
  const badBind = h.deploy(
    testSpec(namespace, { name: 'badbind', volumes: [{ type: 'bind', source: 'relative/path', destination: '/data', driver: 'local', permission: 'rw' }] }),
  );
  const noExec = h.deploy(testSpec(namespace, { name: 'noexec', command: ['/no/such/binary'] }));
  const huge = h.deploy(testSpec(namespace, { name: 'huge', resources: { limits: { memory: '4096Gi' }, requests: {} } }));
  const settle = ['running', 'image_pull_back_off', 'file_system_error', 'create_container_error', 'insufficient_resources', 'error'] as const;
  assert.equal(await h.waitFor(pull.id, settle), 'image_pull_back_off');
  assert.equal(await h.waitFor(badBind.id, settle), 'file_system_error');
  assert.equal(await h.waitFor(noExec.id, settle), 'create_container_error');
  assert.equal(await h.waitFor(huge.id, settle), 'insufficient_resources');
  assert.equal(h.outbox('deployment.error', pull.id)[0]?.reason, 'image_pull_back_off');
  assert.equal(h.outbox('deployment.error', pull.id)[0]?.category, 'user');
  assert.ok(h.reasons(badBind.id).includes('FileSystemError'));
  assert.ok(h.reasons(noExec.id).includes('CreateContainerError'));
  assert.ok(h.reasons(huge.id).includes('InsufficientResources'));
  // Retried statuses back off; the terminal one is never tried again.
  assert.ok((h.get(pull.id).backoff_until ?? 0) > Date.now() - 1_000);
  assert.equal(h.get(huge.id).backoff_until, null);
  assert.deepEqual(await h.containers(noExec.id, true), [], 'a container that failed to start is not left behind');
});

test('scaling: 3 replicas up, then a new apply with 1 replica and no checks replaces at once', async () => {
  const namespace = ns();
  const d = h.deploy(testSpec(namespace, { name: 'scale', replicas: 3 }));
  await h.waitFor(d.id, ['running']);
  assert.equal((await h.containers(d.id)).length, 3);
  assert.equal(h.scheduler.handle.instancesOf(d.id).length, 3);
  assert.deepEqual(h.outbox('deployment.scaled', d.id).map((p) => p.instance_count), [1, 2, 3]);

  const child = h.deploy(testSpec(namespace, { name: 'scale', replicas: 1 }));
  assert.equal(child.parent_id, d.id);
  await h.waitFor(child.id, ['running']);
  await h.waitFor(d.id, ['purged'], 30_000);
  assert.equal((await h.containers(child.id)).length, 1);
});

test('scale down: an extra instance of the same spec (started behind our back) is removed with ScaleDown and deployment.scaled down', async () => {
  const namespace = ns();
  const d = h.deploy(testSpec(namespace, { name: 'extra', replicas: 2 }));
  await h.waitFor(d.id, ['running']);
  const ours = await h.containers(d.id);
  assert.equal(ours.length, 2);
  const [template] = ours;
  assert.ok(template);
  const labels = JSON.parse(await docker('inspect', '--format', '{{json .Config.Labels}}', template)) as Record<string, string>;
  const labelArgs = Object.entries(labels).flatMap(([key, value]) => ['--label', `${key}=${value}`]);
  await docker('run', '-d', '--name', `${namespace}_extra_deadbeef`, '--network', `svc_${namespace}`, ...labelArgs, 'svc-test/busybox:latest', ...WORKER_COMMAND);
  await h.waitUntil('back to 2 instances', async () => (await h.containers(d.id)).length === 2 && h.reasons(d.id).includes('ScaleDown'), 30_000);
  const down = h.outbox('deployment.scaled', d.id).filter((p) => p.direction === 'down');
  assert.deepEqual(down.map((p) => [p.instance_count, p.replicas]), [[2, 2]]);
  assert.equal(h.get(d.id).restart_count, 0, 'a removal the scheduler makes never counts');
  assert.equal(h.get(d.id).status, 'running');
});

test('a container removed behind our back is recreated; a killed worker counts as a restart', async () => {
  const namespace = ns();
  const d = h.deploy(testSpec(namespace, { name: 'heal' }));
  await h.waitFor(d.id, ['running']);
  const [first] = await h.containers(d.id);
  assert.ok(first);
  await docker('rm', '-f', first);
  await h.waitUntil('a replacement container', async () => {
    const now = await h.containers(d.id);
    return now.length === 1 && now[0] !== first;
  });
  const [second] = await h.containers(d.id);
  assert.ok(second);
  await docker('kill', second);
  await h.waitUntil('restart counted and replaced', async () => {
    const now = await h.containers(d.id);
    return h.get(d.id).restart_count === 1 && now.length === 1 && now[0] !== second;
  });
  assert.equal(h.get(d.id).status, 'running');
});

test('health checks: http and tcp gate readiness; results stored per instance; restart on failure replaces the instance', async () => {
  const namespace = ns();
  const server = ['sh', '-c', 'mkdir -p /www && echo ok > /www/index.html && httpd -f -p 8080 -h /www'];
  const d = h.deploy(
    testSpec(namespace, {
      name: 'probed',
      command: server,
      health_checks: [
        { type: 'http', url: 'http://localhost:8080/index.html', interval: '1s', timeout: '1s', threshold: 2, on_failure: 'restart' },
        { type: 'tcp', port: 8080, interval: '1s', timeout: '1s', threshold: 2, on_failure: 'restart' },
        { type: 'command', command: ['true'], interval: '1s', timeout: '2s', threshold: 2, on_failure: 'alert' },
      ],
    }),
  );
  await h.waitFor(d.id, ['running']);
  const latest = listHealthResults(h.db, d.id, { latest: true });
  assert.deepEqual(new Set(latest.map((r) => r.check_type)), new Set(['http', 'tcp', 'command']));
  assert.ok(latest.every((r) => r.status === 'success'));
  const [id] = await h.containers(d.id);
  assert.ok(id);
  // Break the http check: the file is gone → 404 → 2 failures → restart (a planned removal, not a restart count).
  await docker('exec', id, 'rm', '/www/index.html');
  await h.waitUntil('the instance replaced', async () => {
    const now = await h.containers(d.id);
    return now.length === 1 && now[0] !== id;
  });
  const failed = h.outbox('deployment.health_check_failed', d.id);
  assert.equal(failed[0]?.action, 'restart');
  assert.equal(failed[0]?.instance_id, id);
  assert.equal(h.get(d.id).restart_count, 0);
  assert.ok(listHealthResults(h.db, d.id, { limit: 200 }).some((r) => r.status === 'failure' && r.instance_id === id));
});

test('health check on_failure stop marks the deployment deleted; alert only emits an error event', async () => {
  const namespace = ns();
  const server = ['sh', '-c', 'mkdir -p /www && echo ok > /www/index.html && httpd -f -p 8080 -h /www'];
  const check = { type: 'http' as const, url: 'http://localhost:8080/index.html', interval: '1s', timeout: '1s', threshold: 2 };
  const stop = h.deploy(testSpec(namespace, { name: 'stopper', command: server, health_checks: [{ ...check, on_failure: 'stop' }] }));
  const alert = h.deploy(testSpec(namespace, { name: 'alerter', command: server, health_checks: [{ ...check, on_failure: 'alert' }] }));
  await h.waitFor(stop.id, ['running']);
  await h.waitFor(alert.id, ['running']);
  const [stopId] = await h.containers(stop.id);
  const [alertId] = await h.containers(alert.id);
  assert.ok(stopId && alertId);
  await docker('exec', stopId, 'rm', '/www/index.html');
  await docker('exec', alertId, 'rm', '/www/index.html');
  await h.waitFor(stop.id, ['deleted', 'purged'], 30_000);
  await h.waitUntil('alert event', () => h.reasons(alert.id).includes('HealthCheckFailed'), 30_000);
  assert.equal(h.get(alert.id).status, 'running');
  assert.deepEqual(await h.containers(alert.id), [alertId], 'alert keeps the instance');
  assert.equal(h.outbox('deployment.health_check_failed', alert.id)[0]?.action, 'alert');
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  assert.equal(h.outbox('deployment.health_check_failed', alert.id).length, 1, 'alert fires once per failure streak');
});
