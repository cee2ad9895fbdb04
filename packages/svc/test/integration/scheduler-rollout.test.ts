// Rolling updates against real dockerd: a gradual drain (one parent instance at a time, only after a child
// instance is ready), a failing child that leaves the parent serving, and force replacing at once. Plus the
// restart of the scheduler itself: running containers are adopted, never duplicated.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { markDeleted } from '../../src/store/deployments.js';
import { ensureBusyboxImage } from '../support/busybox-image.js';
import { SchedulerHarness, cleanupNamespaces, fileNamespace, testSpec } from './scheduler-support.js';

const namespaces: string[] = [];
let h: SchedulerHarness;

const ns = (): string => fileNamespace(namespaces);

const SERVER = ['sh', '-c', 'mkdir -p /www && echo ok > /www/index.html && exec httpd -f -p 8080 -h /www'];
const TCP_CHECK = { type: 'tcp' as const, port: 8080, interval: '1s', timeout: '1s', threshold: 2, on_failure: 'restart' as const };

before(async () => {
  await ensureBusyboxImage();
  h = SchedulerHarness.create({ intervalMs: 1_000, applyTimeoutMs: 8_000 });
  h.scheduler.start();
});

after(async () => {
  await h.close();
  await cleanupNamespaces(namespaces);
});

test('gradual rolling update: child with parent_id; parent drained one instance at a time after a child instance is ready; step events then complete', async () => {
  const namespace = ns();
  const parent = h.deploy(testSpec(namespace, { name: 'roll', command: SERVER, replicas: 3, health_checks: [TCP_CHECK] }));
  await h.waitFor(parent.id, ['running']);
  const parentContainers = new Set(await h.containers(parent.id));
  assert.equal(parentContainers.size, 3);

  const child = h.deploy(testSpec(namespace, { name: 'roll', command: SERVER, replicas: 3, health_checks: [TCP_CHECK], labels: { v: '2' } }));
  assert.equal(child.parent_id, parent.id);
  // Sample the live total during the update: never below the target minus the one instance being drained.
  let minimumLive = Infinity;
  await h.waitUntil(
    'the parent purged',
    async () => {
      const live = (await h.containers(parent.id)).length + (await h.containers(child.id)).length;
      minimumLive = Math.min(minimumLive, live);
      try {
        h.get(parent.id);
        return false;
      } catch {
        return true;
      }
    },
    60_000,
  );
  assert.equal(h.get(child.id).status, 'running');
  assert.equal((await h.containers(child.id)).length, 3);
  assert.ok(minimumLive >= 2, `live instances never dropped below 2 (saw ${minimumLive})`);
  const phases = h.outbox('deployment.rolling_update', child.id);
  const steps = phases.filter((p) => p.phase === 'step');
  assert.equal(steps.length, 3);
  assert.ok(steps.every((p) => p.parent_id === parent.id && parentContainers.has(String(p.drained_instance_id))));
  assert.equal(new Set(steps.map((p) => p.drained_instance_id)).size, 3, 'each parent instance drained once');
  assert.equal(phases.at(-1)?.phase, 'complete');
  assert.ok(h.reasons(child.id).includes('RollingUpdateStep'));
  assert.ok(h.reasons(child.id).includes('RollingUpdateComplete'));
});

test('a child that never gets ready fails at its deadline and leaves the parent serving (phase failed)', async () => {
  const namespace = ns();
  const parent = h.deploy(testSpec(namespace, { name: 'keep', command: SERVER, replicas: 2, health_checks: [TCP_CHECK] }));
  await h.waitFor(parent.id, ['running']);
  const before = (await h.containers(parent.id)).sort();
  // Listens on nothing: the tcp check never passes, so nothing of the parent is drained.
  const child = h.deploy(testSpec(namespace, { name: 'keep', replicas: 2, health_checks: [TCP_CHECK] }));
  assert.equal(await h.waitFor(child.id, ['failed', 'running'], 30_000), 'failed');
  assert.ok(h.reasons(child.id).includes('ReadinessDeadlineExceeded'));
  assert.equal(h.outbox('deployment.rolling_update', child.id).at(-1)?.phase, 'failed');
  assert.equal(h.outbox('deployment.rolling_update', child.id).filter((p) => p.phase === 'step').length, 0);
  assert.equal(h.get(parent.id).status, 'running');
  assert.deepEqual((await h.containers(parent.id)).sort(), before);
  await h.waitUntil('failed child stopped', async () => (await h.containers(child.id)).length === 0, 20_000);
});

test('force=true replaces at once even with health checks: parent deleted, no drain steps', async () => {
  const namespace = ns();
  const parent = h.deploy(testSpec(namespace, { name: 'force', command: SERVER, replicas: 2, health_checks: [TCP_CHECK] }));
  await h.waitFor(parent.id, ['running']);
  const child = h.deploy(testSpec(namespace, { name: 'force', command: SERVER, replicas: 2, health_checks: [TCP_CHECK], labels: { v: '2' } }), true);
  assert.equal(child.force, true);
  await h.waitFor(parent.id, ['deleted', 'purged'], 10_000);
  await h.waitFor(child.id, ['running'], 30_000);
  await h.waitFor(parent.id, ['purged'], 30_000);
  assert.equal(h.outbox('deployment.rolling_update', child.id).length, 0);
  assert.ok(h.reasons(child.id).includes('Replaced'));
  assert.equal((await h.containers(child.id)).length, 2);
});

test('scheduler restart: running containers are adopted, never duplicated; a deployment created while it was down starts', async () => {
  const namespace = ns();
  const d = h.deploy(testSpec(namespace, { name: 'adopt', replicas: 3 }));
  await h.waitFor(d.id, ['running']);
  const before = (await h.containers(d.id)).sort();
  await h.close(true);

  const later = testSpec(namespace, { name: 'later' });
  const restarted = SchedulerHarness.create({ intervalMs: 1_000, applyTimeoutMs: 8_000, dir: h.dir });
  h = restarted;
  const created = h.deploy(later);
  h.scheduler.start();
  await h.waitFor(created.id, ['running']);
  await h.scheduler.reconcileNow();
  await h.scheduler.settled();
  assert.deepEqual((await h.containers(d.id)).sort(), before, 'the same 3 containers, adopted');
  assert.equal(h.scheduler.handle.instancesOf(d.id).length, 3);
  assert.equal(h.get(d.id).restart_count, 0);
  markDeleted(h.db, d.id);
  h.scheduler.handle.nudge();
  await h.waitFor(d.id, ['purged'], 30_000);
});
