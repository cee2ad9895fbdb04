// The docker runtime against the real dockerd: create/list/remove, naming, labels, networks, ports, mounts,
// env/user/command, resources, and how failures are classified.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDockerRuntime } from '../../src/runtime/docker/index.js';
import { RuntimeError, type ObservedInstance } from '../../src/runtime/runtime.js';
import { ensureBusyboxImage } from '../support/busybox-image.js';
import { cleanupNamespace, docker, dockerExec, eventually, freePort, instanceSpec, testNamespace } from './docker-runtime-helpers.js';

const runtime = createDockerRuntime({});
const nsA = testNamespace();
const nsB = testNamespace();
let scratch = '';

// busybox `wget` crashes in this static build (glibc NSS); `nc` speaks the HTTP we need.
const httpGet = (host: string): string[] => ['sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 2 ${host} 8080`];
const HTTP_SERVER = ['sh', '-c', 'mkdir -p /www && echo hello-from-$HOSTNAME > /www/index.html && exec httpd -f -p 8080 -h /www'];

async function rejectsWith(promise: Promise<unknown>, status: string, category?: string): Promise<RuntimeError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof RuntimeError, `expected a RuntimeError, got ${String(error)}`);
    assert.equal(error.status, status, error.message);
    if (category !== undefined) assert.equal(error.category, category, error.message);
    return error;
  }
  assert.fail(`expected a RuntimeError with status ${status}`);
}

async function containersOf(namespace: string) {
  return docker.listContainers({ all: true, filters: { label: [`svc.namespace=${namespace}`] } });
}

describe('docker runtime lifecycle', { timeout: 240_000 }, () => {
  before(async () => {
    await ensureBusyboxImage();
    scratch = await mkdtemp(join(tmpdir(), 's3t-'));
  });
  after(async () => {
    await cleanupNamespace(nsA);
    await cleanupNamespace(nsB);
    await rm(scratch, { recursive: true, force: true });
  });

  test('ping answers true for a live daemon and false for a missing socket', async () => {
    assert.equal(await runtime.ping(), true);
    assert.equal(await createDockerRuntime({ socketPath: join(tmpdir(), 's3t-no-such.sock') }).ping(), false);
  });

  test('create names and labels the container, list reports it, remove is idempotent', async () => {
    const spec = instanceSpec(nsA, 'web', { labels: { team: 'blue', svc_deployment: 'hijack', 'svc.spec_hash': 'hijack' } });
    const created = await runtime.create(spec);
    assert.match(created.name, new RegExp(`^${nsA}_web_[0-9a-f]{8}$`));
    assert.equal(created.deploymentId, spec.deploymentId);
    assert.equal(created.specHash, spec.specHash);
    assert.equal(created.state, 'running');
    assert.ok(created.startedAt !== null && !Number.isNaN(Date.parse(created.startedAt)));
    assert.match(created.address ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    assert.match(created.imageDigest ?? '', /^sha256:[0-9a-f]{64}$/);

    const info = await docker.getContainer(created.id).inspect();
    assert.equal(info.Config.Labels['svc_deployment'], spec.deploymentId, 'a user label must not override svc_deployment');
    assert.equal(info.Config.Labels['svc.spec_hash'], spec.specHash);
    assert.equal(info.Config.Labels['svc.namespace'], nsA);
    assert.equal(info.Config.Labels['svc.name'], 'web');
    assert.equal(info.Config.Labels['svc.kind'], 'worker');
    assert.equal(info.Config.Labels['team'], 'blue');
    assert.deepEqual(Object.keys(info.NetworkSettings.Networks), [`svc_${nsA}`], 'only on the namespace network, never the default bridge');
    assert.equal(info.HostConfig.RestartPolicy?.Name, 'no');

    const network = await docker.getNetwork(`svc_${nsA}`).inspect();
    assert.equal(network.Driver, 'bridge');
    assert.equal(network.Labels?.['svc.managed'], 'true');

    const listed = (await runtime.list()).find((i) => i.id === created.id);
    assert.deepEqual(listed, created);

    await runtime.remove(created.id, 1);
    assert.equal((await runtime.list()).some((i) => i.id === created.id), false);
    await runtime.remove(created.id, 1);
    await runtime.remove('0000000000000000000000000000000000000000000000000000000000000000', 0);
  });

  test('list reports an exited job with its exit code and drops a container removed behind its back', async () => {
    const job = await runtime.create(instanceSpec(nsA, 'job', { kind: 'job', command: ['sh', '-c', 'exit 7'] }));
    const exited = await eventually(async () => {
      const found = (await runtime.list()).find((i) => i.id === job.id);
      return found?.state === 'exited' ? found : undefined;
    }, 15_000, 'job to exit');
    assert.equal(exited.exitCode, 7);
    assert.ok(exited.finishedAt !== null && !Number.isNaN(Date.parse(exited.finishedAt)));
    assert.equal(exited.address, null);

    await docker.getContainer(job.id).remove({ force: true });
    assert.equal((await runtime.list()).some((i) => i.id === job.id), false);
    await runtime.remove(job.id, 0);
  });

  test('racing creates of one namespace network yield exactly one network', async () => {
    const ns = testNamespace();
    const other = createDockerRuntime({});
    try {
      const settled = await Promise.allSettled([
        runtime.create(instanceSpec(ns, 'a')),
        runtime.create(instanceSpec(ns, 'b')),
        other.create(instanceSpec(ns, 'c')),
        other.create(instanceSpec(ns, 'd')),
      ]);
      const results = settled.map((r) => {
        if (r.status === 'rejected') throw r.reason;
        return r.value;
      });
      const networks = (await docker.listNetworks({ filters: { name: [`svc_${ns}`] } })).filter((n) => n.Name === `svc_${ns}`);
      assert.equal(networks.length, 1);
      for (const instance of results) {
        assert.equal(instance.state, 'running');
        const info = await docker.getContainer(instance.id).inspect();
        assert.deepEqual(Object.keys(info.NetworkSettings.Networks), [`svc_${ns}`]);
        assert.equal(info.NetworkSettings.Networks[`svc_${ns}`]?.NetworkID, networks[0]?.Id, 'everyone on the surviving network');
      }
    } finally {
      await cleanupNamespace(ns);
    }
  });

  test('namespaces are isolated; inside one the deployment name resolves as an alias', async () => {
    const server = await runtime.create(instanceSpec(nsA, 'api', { command: HTTP_SERVER }));
    const neighbour = await runtime.create(instanceSpec(nsA, 'client'));
    const stranger = await runtime.create(instanceSpec(nsB, 'client'));
    assert.ok(server.address !== null);

    const sameNamespace = await eventually(async () => {
      const result = await dockerExec(neighbour.id, httpGet('api'));
      return result.output.includes('hello-from-') ? result : undefined;
    }, 15_000, 'alias reachable inside the namespace');
    assert.match(sameNamespace.output, /hello-from-/);

    const byAddress = await dockerExec(stranger.id, httpGet(server.address));
    assert.doesNotMatch(byAddress.output, /hello-from-/, `a container of another namespace reached ${server.address}`);
    const byAlias = await dockerExec(stranger.id, ['nslookup', 'api']);
    assert.doesNotMatch(byAlias.output, new RegExp(server.address.replace(/\./g, '\\.')));
    for (const instance of [server, neighbour, stranger]) await runtime.remove(instance.id, 0);
  });

  test('host network mode uses the host stack and reports 127.0.0.1', async () => {
    const instance = await runtime.create(instanceSpec(nsA, 'hostnet', { networkMode: 'host' }));
    const info = await docker.getContainer(instance.id).inspect();
    assert.equal(info.HostConfig.NetworkMode, 'host');
    assert.equal(instance.address, '127.0.0.1');
    await runtime.remove(instance.id, 0);
  });

  test('a published port is reachable from 127.0.0.1; a second claim on it is a create_container_error', async () => {
    const port = await freePort();
    const instance = await runtime.create(instanceSpec(nsA, 'published', { command: HTTP_SERVER, ports: [{ published: port, target: 8080 }] }));
    const body = await eventually(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2000) });
      return response.ok ? response.text() : undefined;
    }, 15_000, 'published port');
    assert.match(body, /hello-from-/);

    await rejectsWith(runtime.create(instanceSpec(nsA, 'published2', { command: HTTP_SERVER, ports: [{ published: port, target: 8080 }] })), 'create_container_error', 'user');
    const leftovers = (await containersOf(nsA)).filter((c) => c.Labels['svc.name'] === 'published2');
    assert.equal(leftovers.length, 0, 'a container that failed to start is removed');
    await runtime.remove(instance.id, 0);
  });

  test('named volume (labelled, namespaced), bind mount and read-only file mount', async () => {
    const bindDir = join(scratch, 'bind');
    const configFile = join(scratch, 'app.conf');
    await import('node:fs/promises').then((fs) => fs.mkdir(bindDir));
    await writeFile(join(bindDir, 'input.txt'), 'from-host\n');
    await writeFile(configFile, 'setting=1\n');
    const spec = instanceSpec(nsA, 'mounts', {
      mounts: [
        { type: 'volume', source: 'data', destination: '/data', readOnly: false, driver: 'local' },
        { type: 'bind', source: bindDir, destination: '/bind', readOnly: false },
        { type: 'file', hostPath: configFile, destination: '/etc/app.conf' },
      ],
    });
    const instance = await runtime.create(spec);

    const volume = await docker.getVolume(`${nsA}_data`).inspect();
    assert.deepEqual(
      { managed: volume.Labels['svc.managed'], namespace: volume.Labels['svc.namespace'], deployment: volume.Labels['svc.deployment'] },
      { managed: 'true', namespace: nsA, deployment: spec.deploymentId },
    );
    assert.equal((await dockerExec(instance.id, ['sh', '-c', 'echo kept > /data/file && cat /data/file'])).output.trim(), 'kept');
    assert.equal((await dockerExec(instance.id, ['cat', '/bind/input.txt'])).output.trim(), 'from-host');
    assert.equal((await dockerExec(instance.id, ['sh', '-c', 'echo from-container > /bind/output.txt'])).exitCode, 0);
    assert.equal(await readFile(join(bindDir, 'output.txt'), 'utf8'), 'from-container\n');
    assert.equal((await dockerExec(instance.id, ['cat', '/etc/app.conf'])).output.trim(), 'setting=1');
    const write = await dockerExec(instance.id, ['sh', '-c', 'echo changed > /etc/app.conf']);
    assert.notEqual(write.exitCode, 0, 'a file mount is read-only');
    assert.equal(await readFile(configFile, 'utf8'), 'setting=1\n');

    // The volume outlives the instance and is found again by the next one.
    await runtime.remove(instance.id, 0);
    const next = await runtime.create(instanceSpec(nsA, 'mounts2', { mounts: [{ type: 'volume', source: 'data', destination: '/data', readOnly: true, driver: 'local' }] }));
    assert.equal((await dockerExec(next.id, ['cat', '/data/file'])).output.trim(), 'kept');
    assert.notEqual((await dockerExec(next.id, ['sh', '-c', 'echo x > /data/file'])).exitCode, 0, 'readOnly volume mount');
    await runtime.remove(next.id, 0);
  });

  test('env, user and command (which replaces the entrypoint) reach the process', async () => {
    const instance = await runtime.create(
      instanceSpec(nsA, 'envuser', {
        env: { GREETING: 'hello world', EMPTY: '' },
        user: '1234:4321',
        command: ['sh', '-c', 'echo "greeting=$GREETING"; echo "ids=$(id -u):$(id -g)"; sleep 300'],
      }),
    );
    const info = await docker.getContainer(instance.id).inspect();
    assert.deepEqual(info.Config.Entrypoint, ['sh']);
    assert.deepEqual(info.Config.Cmd, ['-c', 'echo "greeting=$GREETING"; echo "ids=$(id -u):$(id -g)"; sleep 300']);
    assert.equal(info.Config.User, '1234:4321');
    const output = await eventually(async () => {
      const logs = (await docker.getContainer(instance.id).logs({ stdout: true, stderr: true, follow: false })).toString();
      return logs.includes('ids=') ? logs : undefined;
    }, 10_000, 'container output');
    assert.match(output, /greeting=hello world/);
    assert.match(output, /ids=1234:4321/);
    await runtime.remove(instance.id, 0);
  });

  test('resources are applied as NanoCpus, Memory and MemoryReservation', async () => {
    const instance = await runtime.create(
      instanceSpec(nsA, 'limited', { resources: { nanoCpus: 500_000_000, memoryBytes: 64 * 1024 * 1024, memoryReservationBytes: 32 * 1024 * 1024 } }),
    );
    const info = await docker.getContainer(instance.id).inspect();
    assert.equal(info.HostConfig.NanoCpus, 500_000_000);
    assert.equal(info.HostConfig.Memory, 64 * 1024 * 1024);
    assert.equal(info.HostConfig.MemoryReservation, 32 * 1024 * 1024);
    const stats = await runtime.stats(instance);
    assert.equal(stats.memory.limitBytes, 64 * 1024 * 1024);
    await runtime.remove(instance.id, 0);
  });

  test('image policy Never with a missing tag is image_pull_back_off (user); an unreachable registry is transient', async () => {
    const never = await rejectsWith(runtime.create(instanceSpec(nsA, 'never', { image: 'svc-test/busybox:no-such-tag', imagePullPolicy: 'Never' })), 'image_pull_back_off', 'user');
    assert.match(never.message, /no-such-tag/);
    await rejectsWith(
      runtime.create(instanceSpec(nsA, 'unreachable', { image: '127.0.0.1:1/nothing:1', imagePullPolicy: 'IfNotPresent', registryAuth: { username: 'u', password: 'registry-password-xyz' } })),
      'image_pull_back_off',
      'transient',
    ).then((error) => assert.doesNotMatch(error.message, /registry-password-xyz/));
    assert.equal((await containersOf(nsA)).some((c) => ['never', 'unreachable'].includes(c.Labels['svc.name'] ?? '')), false);
  });

  test('registry credentials reach the registry; an unknown manifest is image_pull_back_off (user)', async () => {
    const { createServer } = await import('node:http');
    const seen: string[] = [];
    // A FAKE container registry (no registry is reachable here): just enough of the Registry v2 API — a Basic
    // challenge, then "manifest unknown" — for the real dockerd to send the credentials and fail the pull.
    const registry = createServer((request, response) => {
      seen.push(request.headers.authorization ?? '');
      const headers = { 'Docker-Distribution-API-Version': 'registry/2.0', 'content-type': 'application/json' };
      if (request.headers.authorization === undefined) {
        response.writeHead(401, { ...headers, 'WWW-Authenticate': 'Basic realm="s3t"' });
        response.end();
      } else if (request.url === '/v2/') {
        response.writeHead(200, headers);
        response.end('{}');
      } else {
        response.writeHead(404, headers);
        response.end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] }));
      }
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    const address = registry.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const error = await rejectsWith(
        runtime.create(instanceSpec(nsA, 'authpull', { image: `127.0.0.1:${port}/team/app:1`, imagePullPolicy: 'Always', registryAuth: { username: 'alice', password: 'pw-secret-1' } })),
        'image_pull_back_off',
        'user',
      );
      assert.doesNotMatch(error.message, /pw-secret-1/);
      assert.ok(seen.includes(`Basic ${Buffer.from('alice:pw-secret-1').toString('base64')}`), `credentials not sent: ${seen.join(', ')}`);
    } finally {
      registry.closeAllConnections();
      await new Promise<void>((resolve) => registry.close(() => resolve()));
    }
  });

  test('a registry that accepts but never answers is abandoned after pullTimeoutMs as transient', async () => {
    const { createServer } = await import('node:net');
    const held: import('node:net').Socket[] = [];
    const silent = createServer((socket) => {
      held.push(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const impatient = createDockerRuntime({ pullTimeoutMs: 1500 });
    const started = Date.now();
    try {
      await rejectsWith(impatient.create(instanceSpec(nsA, 'slowpull', { image: `127.0.0.1:${port}/slow:1`, imagePullPolicy: 'Always' })), 'image_pull_back_off', 'transient');
      assert.ok(Date.now() - started < 15_000, 'the pull was abandoned');
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  test('create failures are classified and never echo environment values', async () => {
    const secretEnv = { API_KEY: 'super-secret-value-123' };
    const missingBind = await rejectsWith(
      runtime.create(instanceSpec(nsA, 'badbind', { env: secretEnv, mounts: [{ type: 'bind', source: join(scratch, 'does-not-exist'), destination: '/x', readOnly: false }] })),
      'file_system_error',
      'user',
    );
    assert.doesNotMatch(missingBind.message, /super-secret-value-123/);
    const missingFile = await rejectsWith(
      runtime.create(instanceSpec(nsA, 'badfile', { mounts: [{ type: 'file', hostPath: join(scratch, 'missing.conf'), destination: '/etc/missing.conf' }] })),
      'file_system_error',
    );
    assert.match(missingFile.message, /badfile/);
    await rejectsWith(runtime.create(instanceSpec(nsA, 'badcmd', { env: secretEnv, command: ['/no/such/binary'] })), 'create_container_error', 'user');
    await rejectsWith(runtime.create(instanceSpec(nsA, 'badmem', { resources: { nanoCpus: null, memoryBytes: 1024, memoryReservationBytes: null } })), 'create_container_error', 'user');
    await rejectsWith(
      runtime.create(instanceSpec(nsA, 'toobig', { resources: { nanoCpus: null, memoryBytes: 1024 ** 5, memoryReservationBytes: null } })),
      'insufficient_resources',
      'user',
    );
    await rejectsWith(runtime.create(instanceSpec(nsA, 'toomanycpus', { resources: { nanoCpus: 4096 * 1e9, memoryBytes: null, memoryReservationBytes: null } })), 'insufficient_resources', 'user');
    const leftovers = (await containersOf(nsA)).filter((c) => ['badbind', 'badfile', 'badcmd', 'badmem', 'toobig', 'toomanycpus'].includes(c.Labels['svc.name'] ?? ''));
    assert.deepEqual(leftovers.map((c) => c.Names), []);
  });

  test('observed instances from create and list agree for a running container', async () => {
    const instance: ObservedInstance = await runtime.create(instanceSpec(nsB, 'agree'));
    const [first, second] = [await runtime.list(), await runtime.list()];
    assert.deepEqual(first.find((i) => i.id === instance.id), instance);
    assert.deepEqual(second.find((i) => i.id === instance.id), instance);
    await runtime.remove(instance.id, 0);
  });
});
