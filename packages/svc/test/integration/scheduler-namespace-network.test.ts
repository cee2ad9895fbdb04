// Namespace networks are given back: once a purge leaves a namespace without instances, the scheduler asks the
// runtime to release it and the `svc_<namespace>` network is removed (dockerd's default pools hold ~30), while a
// network still in use (a running container, or one created but not yet started) is kept, and a new deployment
// in the namespace afterwards recreates the network and runs. Real dockerd, real SQLite, `s5t` namespaces.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createDockerRuntime } from '../../src/runtime/docker/index.js';
import { markDeleted } from '../../src/store/deployments.js';
import { ensureBusyboxImage } from '../support/busybox-image.js';
import { instanceSpec } from './docker-runtime-helpers.js';
import { SchedulerHarness, cleanupNamespaces, docker, testSpec } from './scheduler-support.js';

const namespaces: string[] = [];
function freshNamespace(): string {
  const namespace = `s5t-net-${randomBytes(3).toString('hex')}`;
  namespaces.push(namespace);
  return namespace;
}

async function networkExists(namespace: string): Promise<boolean> {
  const names = await docker('network', 'ls', '--format', '{{.Name}}', '--filter', `name=svc_${namespace}`);
  return names.split('\n').includes(`svc_${namespace}`);
}

let h: SchedulerHarness;

before(async () => {
  await ensureBusyboxImage();
  h = SchedulerHarness.create({ intervalMs: 500 });
  h.scheduler.start();
});

after(async () => {
  if (h !== undefined) await h.close();
  await cleanupNamespaces(namespaces);
});

test('the namespace network is removed after the purge of its last deployment; a new deployment recreates it', async () => {
  const namespace = freshNamespace();
  const first = h.deploy(testSpec(namespace, { name: 'one' }));
  await h.waitFor(first.id, ['running']);
  assert.equal(await networkExists(namespace), true);

  markDeleted(h.db, first.id);
  h.scheduler.handle.nudge();
  await h.waitFor(first.id, ['purged']);
  await h.waitUntil('namespace network removed', async () => !(await networkExists(namespace)), 20_000);

  const second = h.deploy(testSpec(namespace, { name: 'two' }));
  await h.waitFor(second.id, ['running']);
  assert.equal(await networkExists(namespace), true);
  assert.equal((await h.containers(second.id)).length, 1);
});

test('a purge keeps the network while another deployment of the namespace still has instances', async () => {
  const namespace = freshNamespace();
  const stays = h.deploy(testSpec(namespace, { name: 'stays' }));
  const goes = h.deploy(testSpec(namespace, { name: 'goes' }));
  await h.waitFor(stays.id, ['running']);
  await h.waitFor(goes.id, ['running']);
  markDeleted(h.db, goes.id);
  h.scheduler.handle.nudge();
  await h.waitFor(goes.id, ['purged']);
  await h.scheduler.settled();
  assert.equal(await networkExists(namespace), true);
  assert.equal(h.get(stays.id).status, 'running');
});

test('releaseNamespace keeps a network a stopped member is configured for, removes it once the namespace is empty', async () => {
  const namespace = freshNamespace();
  const runtime = createDockerRuntime();
  assert.ok(runtime.releaseNamespace !== undefined);
  const instance = await runtime.create(instanceSpec(namespace, 'member'));
  // A stopped container holds no endpoint: dockerd alone would remove the network under it.
  await docker('stop', '-t', '0', instance.id);
  await runtime.releaseNamespace(namespace);
  assert.equal(await networkExists(namespace), true, 'a stopped member keeps its network');
  await runtime.remove(instance.id, 0);
  await runtime.releaseNamespace(namespace);
  assert.equal(await networkExists(namespace), false, 'released once the namespace is empty');
  await runtime.releaseNamespace(namespace); // nothing left: harmless
});

test('creations racing releases from another process all succeed (a network removed under a creation is recreated)', async () => {
  const namespace = freshNamespace();
  const creator = createDockerRuntime();
  const releaser = createDockerRuntime(); // its own bookkeeping, like another svc process on the daemon
  assert.ok(releaser.releaseNamespace !== undefined);
  for (let round = 0; round < 6; round += 1) {
    const release = releaser.releaseNamespace.bind(releaser);
    const creation = creator.create(instanceSpec(namespace, `race${round}`, { command: ['sleep', '30'] }));
    await Promise.all([release(namespace), new Promise((resolve) => setTimeout(resolve, round * 15)).then(() => release(namespace))]);
    const created = await creation;
    assert.equal(created.state, 'running', `round ${round}`);
    assert.ok(created.address !== null, `round ${round}: attached to the namespace network`);
    await creator.remove(created.id, 0);
  }
});
