import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  containerCreateOptions,
  containerLabels,
  containerName,
  dockerVolumeName,
  hostCapacityProblem,
  namespaceNetworkName,
  normalizeImageReference,
  volumeLabels,
} from '../../src/runtime/docker/container-config.js';
import type { InstanceSpec } from '../../src/runtime/runtime.js';
import { bareInstanceSpec } from '../support/instance-spec.js';

function spec(overrides: Partial<InstanceSpec> = {}): InstanceSpec {
  return bareInstanceSpec({ deploymentId: 'd-1', namespace: 'shop', name: 'web', image: 'nginx', command: null, specHash: 'h1', ...overrides });
}

test('names: container, namespace network and namespaced volume', () => {
  assert.equal(containerName('shop', 'web', '0a1b2c3d'), 'shop_web_0a1b2c3d');
  assert.throws(() => containerName('shop', 'web', 'XYZ'));
  assert.throws(() => containerName('shop', 'web', '0a1b2c3d4'));
  assert.equal(namespaceNetworkName('shop'), 'svc_shop');
  assert.equal(dockerVolumeName('shop', 'data'), 'shop_data');
});

test('svc labels win over user labels of the same key; other user labels are kept', () => {
  const labels = containerLabels(spec({ labels: { svc_deployment: 'evil', 'svc.spec_hash': 'evil', 'svc.namespace': 'other', tier: 'front' } }));
  assert.deepEqual(labels, {
    svc_deployment: 'd-1',
    'svc.spec_hash': 'h1',
    'svc.namespace': 'shop',
    'svc.name': 'web',
    'svc.kind': 'worker',
    'svc.managed': 'true',
    tier: 'front',
  });
  assert.deepEqual(volumeLabels('shop', 'd-1'), { 'svc.managed': 'true', 'svc.namespace': 'shop', 'svc.deployment': 'd-1' });
});

test('image references get :latest only when they carry neither tag nor digest', () => {
  assert.equal(normalizeImageReference('nginx'), 'nginx:latest');
  assert.equal(normalizeImageReference('nginx:1.25'), 'nginx:1.25');
  assert.equal(normalizeImageReference('registry.local:5000/team/app'), 'registry.local:5000/team/app:latest');
  assert.equal(normalizeImageReference('registry.local:5000/team/app:2'), 'registry.local:5000/team/app:2');
  assert.equal(normalizeImageReference('nginx@sha256:abc'), 'nginx@sha256:abc');
});

test('bridge mode: only the namespace network with the name as alias, ports published, no restart policy', () => {
  const options = containerCreateOptions(spec({ ports: [{ published: 8080, target: 80 }, { published: 8443, target: 443 }] }), 'shop_web_0a1b2c3d', 'svc_shop');
  assert.equal(options.name, 'shop_web_0a1b2c3d');
  assert.equal(options.Image, 'nginx:latest');
  assert.equal(options.HostConfig?.NetworkMode, 'svc_shop');
  assert.deepEqual(options.NetworkingConfig, { EndpointsConfig: { svc_shop: { Aliases: ['web'] } } });
  assert.deepEqual(options.ExposedPorts, { '80/tcp': {}, '443/tcp': {} });
  assert.deepEqual(options.HostConfig?.PortBindings, { '80/tcp': [{ HostPort: '8080' }], '443/tcp': [{ HostPort: '8443' }] });
  assert.deepEqual(options.HostConfig?.RestartPolicy, { Name: 'no', MaximumRetryCount: 0 });
  assert.equal(options.Entrypoint, undefined, 'no command: the image entrypoint runs');
  assert.equal(options.Cmd, undefined);
  assert.equal(options.User, undefined);
  assert.equal(options.HostConfig?.NanoCpus, undefined);
  assert.equal(options.HostConfig?.Memory, undefined);
});

test('host mode: host network, no alias, no port bindings', () => {
  const options = containerCreateOptions(spec({ networkMode: 'host', ports: [{ published: 80, target: 80 }] }), 'shop_web_0a1b2c3d', 'ignored');
  assert.equal(options.HostConfig?.NetworkMode, 'host');
  assert.equal(options.NetworkingConfig, undefined);
  assert.deepEqual(options.HostConfig?.PortBindings, {});
});

test('command replaces entrypoint and cmd; env, user, resources and mounts are mapped', () => {
  const options = containerCreateOptions(
    spec({
      command: ['/app/server', '--port', '80'],
      env: { A: '1', B: 'x=y' },
      user: '1000:1000',
      resources: { nanoCpus: 500_000_000, memoryBytes: 268_435_456, memoryReservationBytes: 134_217_728 },
      mounts: [
        { type: 'bind', source: '/srv/data', destination: '/data', readOnly: false },
        { type: 'volume', source: 'cache', destination: '/cache', readOnly: true, driver: 'local' },
        { type: 'file', hostPath: '/run/svc/cfg/app.json', destination: '/etc/app.json' },
      ],
    }),
    'shop_web_0a1b2c3d',
    'svc_shop',
  );
  assert.deepEqual(options.Entrypoint, ['/app/server']);
  assert.deepEqual(options.Cmd, ['--port', '80']);
  assert.deepEqual(options.Env, ['A=1', 'B=x=y']);
  assert.equal(options.User, '1000:1000');
  assert.equal(options.HostConfig?.NanoCpus, 500_000_000);
  assert.equal(options.HostConfig?.Memory, 268_435_456);
  assert.equal(options.HostConfig?.MemorySwap, 268_435_456, 'no swap beyond the limit');
  assert.equal(options.HostConfig?.MemoryReservation, 134_217_728);
  assert.deepEqual(options.HostConfig?.Mounts, [
    { Type: 'bind', Source: '/srv/data', Target: '/data', ReadOnly: false },
    { Type: 'volume', Source: 'shop_cache', Target: '/cache', ReadOnly: true },
    { Type: 'bind', Source: '/run/svc/cfg/app.json', Target: '/etc/app.json', ReadOnly: true },
  ]);
});

test('host capacity: memory limit or reservation above host RAM, or more CPUs than the host has', () => {
  const host = { memoryBytes: 1024, cpus: 2 };
  const none = { nanoCpus: null, memoryBytes: null, memoryReservationBytes: null };
  assert.equal(hostCapacityProblem(none, host), null);
  assert.equal(hostCapacityProblem({ ...none, memoryBytes: 1024, nanoCpus: 2e9 }, host), null);
  assert.match(hostCapacityProblem({ ...none, memoryBytes: 1025 }, host) ?? '', /memory/);
  assert.match(hostCapacityProblem({ ...none, memoryReservationBytes: 2048 }, host) ?? '', /memory/);
  assert.match(hostCapacityProblem({ ...none, nanoCpus: 2_000_000_001 }, host) ?? '', /CPU/);
});
