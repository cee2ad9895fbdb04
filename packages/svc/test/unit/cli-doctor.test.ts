import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultConfig, parseConfigToml, serializeConfigToml } from '../../src/config/config-file.js';
import { dockerSocketPath, runtimeChecks, runtimesToCheck, secretKeyCheck, type Probe } from '../../src/cli/doctor-checks.js';
import { enabledRuntimes } from '../../src/cli/commands/init.js';

function probe(overrides: Partial<Probe> = {}): Probe {
  return {
    env: {},
    exists: () => true,
    readWrite: () => true,
    which: (b) => `/usr/bin/${b}`,
    executable: () => true,
    pingSocket: async () => null,
    ...overrides,
  };
}

test('secret key: unset, not base64, wrong length, good', () => {
  assert.equal(secretKeyCheck(undefined).ok, false);
  assert.equal(secretKeyCheck('not base64!').ok, false);
  assert.match(secretKeyCheck(Buffer.alloc(16).toString('base64')).detail, /32 bytes \(got 16\)/);
  assert.equal(secretKeyCheck(Buffer.alloc(32, 7).toString('base64')).ok, true);
});

test('no runtime enabled means all are checked', () => {
  assert.deepEqual(runtimesToCheck([]), ['docker', 'podman', 'cloud-hypervisor', 'firecracker']);
  assert.deepEqual(runtimesToCheck(['docker']), ['docker']);
});

test('cloud-hypervisor checks: binary, kvm, firmware, kernel, virtiofsd; shared checks once', async () => {
  const config = defaultConfig();
  config.runtime.firmware_path = '/fw/hypervisor-fw';
  const results = await runtimeChecks(
    config,
    ['cloud-hypervisor', 'firecracker'],
    probe({ which: (b) => (b === 'firecracker' ? null : `/usr/bin/${b}`), readWrite: () => false, env: { SVC_VIRTIOFSD: '/opt/virtiofsd' } }),
  );
  const byName = Object.fromEntries(results.map((r) => [r.name, r]));
  assert.deepEqual(results.map((r) => r.name), ['cloud-hypervisor binary', '/dev/kvm', 'firmware', 'kernel', 'virtiofsd', 'firecracker binary']);
  assert.equal(byName['/dev/kvm']!.ok, false);
  assert.equal(byName.firmware!.ok, true);
  assert.match(byName.kernel!.detail, /kernel_path is not set/);
  assert.match(byName.virtiofsd!.detail, /SVC_VIRTIOFSD/);
  assert.equal(byName['firecracker binary']!.ok, false);
});

test('docker: the socket must answer; DOCKER_HOST is honoured', async () => {
  assert.equal(dockerSocketPath({ DOCKER_HOST: 'unix:///run/user/1000/docker.sock' }), '/run/user/1000/docker.sock');
  const [down] = await runtimeChecks(defaultConfig(), ['docker'], probe({ pingSocket: async () => 'ECONNREFUSED' }));
  assert.deepEqual(down, { name: 'docker socket', ok: false, detail: '/var/run/docker.sock: ECONNREFUSED' });
});

test('init: runtime choices; the written config reads back the same', () => {
  assert.deepEqual(enabledRuntimes('both'), ['docker', 'cloud-hypervisor']);
  assert.deepEqual(enabledRuntimes('podman'), ['podman']);
  const config = defaultConfig();
  config.contexts[0]!.port = 4040;
  config.runtime.enabled = ['docker', 'cloud-hypervisor'];
  config.runtime.kernel_path = '/boot/vmlinux "x"';
  config.cors_origins = ['https://a.example'];
  assert.deepEqual(parseConfigToml(serializeConfigToml(config), 'x.toml'), config);
});
