import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareByCreation, containerAddress, dockerTime, dockerTimeNanos, exitCodeFromStatus, toInstanceState, toObservedInstance, type ListedContainer } from '../../src/runtime/docker/observe.js';

const digest = `sha256:${'a'.repeat(64)}`;

function listed(overrides: Partial<ListedContainer> = {}): ListedContainer {
  return {
    Id: 'c1',
    Names: ['/shop_web_0a1b2c3d'],
    ImageID: digest,
    Labels: { svc_deployment: 'd-1', 'svc.spec_hash': 'h1', 'svc.namespace': 'shop' },
    State: 'running',
    Status: 'Up 3 minutes',
    HostConfig: { NetworkMode: 'svc_shop' },
    NetworkSettings: { Networks: { svc_shop: { IPAddress: '172.20.0.5' } } },
    ...overrides,
  };
}

test('states map one to one; unknown states count as dead', () => {
  for (const state of ['created', 'running', 'restarting', 'paused', 'exited', 'dead', 'removing'] as const) assert.equal(toInstanceState(state), state);
  assert.equal(toInstanceState('Running'), 'running');
  assert.equal(toInstanceState('weird'), 'dead');
});

test('docker zero time is null; exit codes come out of the list Status text', () => {
  assert.equal(dockerTime('0001-01-01T00:00:00Z'), null);
  assert.equal(dockerTime(''), null);
  assert.equal(dockerTime('2024-05-01T10:00:00.5Z'), '2024-05-01T10:00:00.5Z');
  assert.equal(exitCodeFromStatus('Exited (137) 5 seconds ago'), 137);
  assert.equal(exitCodeFromStatus('Exited (0) About a minute ago'), 0);
  assert.equal(exitCodeFromStatus('Up 2 hours'), null);
});

test('address: IP on the namespace network, 127.0.0.1 in host mode, null otherwise', () => {
  assert.equal(containerAddress(listed()), '172.20.0.5');
  assert.equal(containerAddress(listed({ HostConfig: { NetworkMode: 'host' }, NetworkSettings: { Networks: {} } })), '127.0.0.1');
  assert.equal(containerAddress(listed({ NetworkSettings: { Networks: { bridge: { IPAddress: '172.17.0.2' } } } })), null, 'never the default bridge');
  assert.equal(containerAddress(listed({ NetworkSettings: { Networks: { svc_shop: { IPAddress: '' } } } })), null);
});

test('a running container: no exit code or finish time, address and digest reported', () => {
  const times = { startedAt: '2024-05-01T10:00:00Z', finishedAt: '2024-05-01T09:00:00Z', exitCode: 0 };
  assert.deepEqual(toObservedInstance(listed(), times), {
    id: 'c1',
    name: 'shop_web_0a1b2c3d',
    deploymentId: 'd-1',
    specHash: 'h1',
    state: 'running',
    exitCode: null,
    startedAt: '2024-05-01T10:00:00Z',
    finishedAt: null,
    address: '172.20.0.5',
    imageDigest: digest,
  });
});

test('an exited container: exit code from inspect, else from the Status text; no address', () => {
  const exited = listed({ State: 'exited', Status: 'Exited (3) 1 second ago' });
  const observed = toObservedInstance(exited, { startedAt: '2024-05-01T10:00:00Z', finishedAt: '2024-05-01T10:00:05Z', exitCode: 3 });
  assert.equal(observed.exitCode, 3);
  assert.equal(observed.finishedAt, '2024-05-01T10:00:05Z');
  assert.equal(observed.address, null);
  const withoutInspect = toObservedInstance(exited, null);
  assert.equal(withoutInspect.exitCode, 3);
  assert.equal(withoutInspect.startedAt, null);
  assert.equal(toObservedInstance(listed({ ImageID: 'weird' }), null).imageDigest, null);
});

test('creation times compare numerically although Docker trims fraction zeros', () => {
  assert.equal(dockerTimeNanos('2024-05-01T10:00:00.12Z'), 1_714_557_600_120_000_000n);
  assert.equal(dockerTimeNanos('2024-05-01T12:00:00.5+02:00'), 1_714_557_600_500_000_000n);
  assert.equal(dockerTimeNanos('yesterday'), null);
  const older = { Created: '2024-05-01T10:00:00.12Z', Id: 'b' };
  const newer = { Created: '2024-05-01T10:00:00.123Z', Id: 'a' };
  assert.deepEqual([newer, older].sort(compareByCreation), [older, newer]);
  assert.deepEqual([{ Created: 'x', Id: 'b' }, { Created: 'x', Id: 'a' }].sort(compareByCreation).map((n) => n.Id), ['a', 'b']);
});
