import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration, validateDeployment, type DeploymentValidation } from '../../src/domain/deployment-validation.js';
import { publicSpec, type DeploymentSpec } from '../../src/domain/deployment.js';
import type { Violation } from '../../src/domain/violations.js';

const minimal = { name: 'web', runtime: 'docker', namespace: 'prod', image: 'nginx:1.27' };

function valid(body: unknown): DeploymentSpec {
  const result = validateDeployment(body);
  if (!result.ok) assert.fail(`expected ok, got ${JSON.stringify(result)}`);
  return result.spec;
}

function violations(body: unknown): Violation[] {
  const result = validateDeployment(body);
  if (result.ok || result.kind !== 'invalid') assert.fail(`expected invalid, got ${JSON.stringify(result)}`);
  return result.violations;
}

function codes(body: unknown): string[] {
  return violations(body).map((v) => `${v.property_path} ${v.code}`);
}

function malformed(body: unknown): string {
  const result: DeploymentValidation = validateDeployment(body);
  if (result.ok || result.kind !== 'malformed') assert.fail(`expected malformed, got ${JSON.stringify(result)}`);
  return result.message;
}

test('a minimal body gets every default', () => {
  assert.deepEqual(valid(minimal), {
    name: 'web',
    runtime: 'docker',
    namespace: 'prod',
    kind: 'worker',
    image: 'nginx:1.27',
    config: { image_pull_policy: 'IfNotPresent' },
    replicas: 1,
    ports: [],
    labels: {},
    environment: {},
    volumes: [],
    resources: { limits: {}, requests: {} },
    health_checks: [],
    network: { mode: 'bridge' },
  });
});

test('a full body is kept, health-check defaults applied, config mounts forced read-only', () => {
  const spec = valid({
    ...minimal,
    kind: 'worker',
    replicas: 1,
    command: ['nginx', '-g', 'daemon off;'],
    labels: { app: 'web', 'com.example/tier': 'front' },
    environment: { PORT: '8080', DB_PASSWORD: { secretRef: 'db-password' } },
    ports: [{ published: 8080, target: 80 }],
    volumes: [
      { type: 'bind', source: '/srv/data', destination: '/data', driver: 'local', permission: 'ro' },
      { type: 'volume', source: 'web-cache', destination: '/cache', driver: 'local', permission: 'rw' },
      { type: 'config', source: 'web.conf', destination: '/etc/nginx/conf.d/x.conf', driver: 'local', permission: 'rw', key: 'nginx' },
    ],
    resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: 0.5, memory: 134217728 } },
    health_checks: [
      { type: 'tcp', port: 80 },
      { type: 'http', url: 'http://localhost:80/healthz', interval: '500ms', timeout: '2s', threshold: 5, on_failure: 'alert' },
      { type: 'command', command: ['true'], on_failure: 'stop' },
    ],
    config: { image_pull_policy: 'Never', user: '1000:1000', registry_auth: { username: 'u', password: 'p', server_address: 'r.example' } },
    network: { mode: 'bridge' },
  });
  assert.deepEqual(spec.command, ['nginx', '-g', 'daemon off;']);
  assert.equal(spec.volumes[2]?.permission, 'ro');
  assert.equal(spec.volumes[2]?.key, 'nginx');
  assert.equal(spec.volumes[0]?.key, undefined);
  assert.deepEqual(spec.resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '0.5', memory: '134217728' } });
  assert.deepEqual(spec.health_checks[0], { type: 'tcp', port: 80, interval: '10s', timeout: '5s', threshold: 3, on_failure: 'restart' });
  assert.deepEqual(spec.health_checks[1], {
    type: 'http',
    url: 'http://localhost:80/healthz',
    interval: '500ms',
    timeout: '2s',
    threshold: 5,
    on_failure: 'alert',
  });
  assert.equal(spec.health_checks[2]?.on_failure, 'stop');
  assert.deepEqual(spec.environment['DB_PASSWORD'], { secretRef: 'db-password' });
  assert.deepEqual(spec.config, {
    image_pull_policy: 'Never',
    user: '1000:1000',
    registry_auth: { username: 'u', password: 'p', server_address: 'r.example' },
  });
});

test('read-only record fields echoed from a GET are ignored; nulls count as absent', () => {
  const spec = valid({ ...minimal, id: 'x', status: 'running', parent_id: null, instances: [], command: null, labels: null });
  assert.equal('id' in spec, false);
  assert.equal(spec.command, undefined);
  assert.deepEqual(spec.labels, {});
});

const malformedCases: [string, unknown, RegExp][] = [
  ['not an object', [], /body must be an object/],
  ['null body', null, /body must be an object/],
  ['missing name', { runtime: 'docker', namespace: 'prod', image: 'x' }, /name is required/],
  ['missing runtime', { name: 'a', namespace: 'prod', image: 'x' }, /runtime is required/],
  ['missing namespace', { name: 'a', runtime: 'docker', image: 'x' }, /namespace is required/],
  ['missing image', { name: 'a', runtime: 'docker', namespace: 'prod' }, /image is required/],
  ['name not a string', { ...minimal, name: 7 }, /name must be a string/],
  ['replicas a string', { ...minimal, replicas: '2' }, /replicas must be an integer/],
  ['replicas fractional', { ...minimal, replicas: 1.5 }, /replicas must be an integer/],
  ['unknown field', { ...minimal, replica: 3 }, /replica is not a known field/],
  ['command not strings', { ...minimal, command: ['a', 1] }, /command\[1\] must be a string/],
  ['ports not an array', { ...minimal, ports: { published: 1 } }, /ports must be an array/],
  ['port missing target', { ...minimal, ports: [{ published: 80 }] }, /ports\[0\]\.target is required/],
  ['port as string', { ...minimal, ports: [{ published: '80', target: 80 }] }, /ports\[0\]\.published must be an integer/],
  ['labels as list (manifest form)', { ...minimal, labels: [{ app: 'x' }] }, /labels must be an object/],
  ['label value number', { ...minimal, labels: { a: 1 } }, /labels\.a must be a string/],
  ['env value number', { ...minimal, environment: { A: 1 } }, /environment\.A must be a string or/],
  ['env object without secretRef', { ...minimal, environment: { A: { value: 'x' } } }, /environment\.A\.value is not a known field/],
  ['volume missing driver', { ...minimal, volumes: [{ type: 'bind', source: '/a', destination: '/b', permission: 'rw' }] }, /volumes\[0\]\.driver is required/],
  ['volume missing permission', { ...minimal, volumes: [{ type: 'bind', source: '/a', destination: '/b', driver: 'local' }] }, /volumes\[0\]\.permission is required/],
  ['health check without type', { ...minimal, health_checks: [{ port: 80 }] }, /health_checks\[0\]\.type is required/],
  ['health check port string', { ...minimal, health_checks: [{ type: 'tcp', port: '80' }] }, /health_checks\[0\]\.port must be an integer/],
  ['duration as number', { ...minimal, health_checks: [{ type: 'tcp', port: 80, interval: 10 }] }, /interval must be a string/],
  ['resources cpu boolean', { ...minimal, resources: { limits: { cpu: true } } }, /resources\.limits\.cpu must be a string or a number/],
  ['resources unknown key', { ...minimal, resources: { limit: {} } }, /resources\.limit is not a known field/],
  ['registry auth without password', { ...minimal, config: { registry_auth: { username: 'u' } } }, /password is required/],
  ['network not an object', { ...minimal, network: 'host' }, /network must be an object/],
];

for (const [label, body, message] of malformedCases) {
  test(`malformed: ${label}`, () => {
    assert.match(malformed(body), message);
  });
}

// Each row: a body, and the exact `<property_path> <code>` list it must produce (order as reported).
const invalidCases: [string, unknown, string[]][] = [
  ['rule 1: unknown runtime', { ...minimal, runtime: 'podman' }, ['runtime deployment.runtime.unsupported']],
  [
    'rule 2: cloud-hypervisor refuses command and needs an absolute image',
    { ...minimal, runtime: 'cloud-hypervisor', image: 'disk.img', command: ['x'] },
    ['image deployment.image.cloud_hypervisor_requires_absolute_path', 'command deployment.command.cloud_hypervisor_unsupported'],
  ],
  [
    'rule 3: host network on cloud-hypervisor',
    { ...minimal, runtime: 'cloud-hypervisor', image: '/img', network: { mode: 'host' } },
    ['network.mode deployment.network.host_runtime_unsupported'],
  ],
  [
    'rule 3: host network forbids ports and replicas above 1',
    { ...minimal, network: { mode: 'host' }, replicas: 2, ports: [{ published: 80, target: 80 }] },
    [
      'ports deployment.ports.host_network_conflict',
      'replicas deployment.replicas.host_network_conflict',
      'ports deployment.ports.replicas_conflict',
      'replicas deployment.replicas.ports_conflict',
    ],
  ],
  [
    'rule 4: port ranges and duplicates',
    { ...minimal, ports: [{ published: 0, target: 70000 }, { published: 8080, target: 80 }, { published: 8080, target: 81 }] },
    [
      'ports[0].published deployment.ports.published.out_of_range',
      'ports[0].target deployment.ports.target.out_of_range',
      'ports[2].published deployment.ports.published.duplicate',
    ],
  ],
  [
    'rule 5: ports with replicas above 1 on both fields',
    { ...minimal, replicas: 3, ports: [{ published: 8080, target: 80 }] },
    ['ports deployment.ports.replicas_conflict', 'replicas deployment.replicas.ports_conflict'],
  ],
  [
    'rule 6: job needs one replica and no readiness checks',
    { ...minimal, kind: 'job', replicas: 2, health_checks: [{ type: 'tcp', port: 80 }] },
    ['replicas deployment.replicas.job_must_be_one', 'health_checks deployment.health_checks.job_readiness_unsupported'],
  ],
  ['rule 6: job with zero replicas', { ...minimal, kind: 'job', replicas: 0 }, ['replicas deployment.replicas.job_must_be_one']],
  [
    'rule 7: environment keys',
    { ...minimal, environment: { 'MY-KEY': 'a', '1ABC': 'b', ok_key: 'c' } },
    ['environment.MY-KEY deployment.environment.key.invalid', 'environment.1ABC deployment.environment.key.invalid'],
  ],
  [
    'rule 8: quantities must parse',
    { ...minimal, resources: { limits: { cpu: '500x', memory: '1G' }, requests: { cpu: '0', memory: '-1' } } },
    [
      'resources.limits.cpu deployment.resources.limits.cpu.invalid',
      'resources.limits.memory deployment.resources.limits.memory.invalid',
      'resources.requests.cpu deployment.resources.requests.cpu.invalid',
      'resources.requests.memory deployment.resources.requests.memory.invalid',
    ],
  ],
  [
    'rule 8 (added): docker memory floor and request above limit',
    { ...minimal, resources: { limits: { memory: '1Mi' }, requests: { memory: '2Mi' } } },
    ['resources.limits.memory deployment.resources.limits.memory.invalid', 'resources.requests.memory deployment.resources.requests.memory.exceeds_limit'],
  ],
  ['rule 9: image pull policy', { ...minimal, config: { image_pull_policy: 'Sometimes' } }, ['config.image_pull_policy deployment.config.image_pull_policy.unsupported']],
  ['kind', { ...minimal, kind: 'cron' }, ['kind deployment.kind.unsupported']],
  ['name format and length', { ...minimal, name: 'Web_App' }, ['name deployment.name.format']],
  ['name too long', { ...minimal, name: 'a'.repeat(64) }, ['name deployment.name.length']],
  ['namespace rules', { ...minimal, namespace: 'A' }, ['namespace deployment.namespace.length', 'namespace deployment.namespace.format']],
  ['image with spaces', { ...minimal, image: 'nginx latest' }, ['image deployment.image.format']],
  ['empty image', { ...minimal, image: '' }, ['image deployment.image.length']],
  ['empty command', { ...minimal, command: [] }, ['command deployment.command.length']],
  ['replicas range', { ...minimal, replicas: 101 }, ['replicas deployment.replicas.out_of_range']],
  ['negative replicas', { ...minimal, replicas: -1 }, ['replicas deployment.replicas.out_of_range']],
  ['label key', { ...minimal, labels: { '-bad': 'x' } }, ['labels.-bad deployment.labels.key.invalid']],
  ['label value length', { ...minimal, labels: { a: 'x'.repeat(1025) } }, ['labels.a deployment.labels.value.length']],
  ['secret ref name', { ...minimal, environment: { A: { secretRef: '-x' } } }, ['environment.A.secretRef deployment.environment.secret_ref.invalid']],
  [
    'volumes: type, permission, paths, key',
    {
      ...minimal,
      volumes: [
        { type: 'tmpfs', source: 'x', destination: '/x', driver: 'local', permission: 'rw' },
        { type: 'bind', source: 'relative', destination: 'also-relative', driver: 'local', permission: 'rx' },
        { type: 'config', source: 'cfg', destination: '/etc/cfg', driver: 'local', permission: 'ro' },
        { type: 'volume', source: 'Data', destination: '/etc/cfg', driver: 'local', permission: 'rw', key: 'k' },
      ],
    },
    [
      'volumes[0].type deployment.volumes.type.unsupported',
      'volumes[1].source deployment.volumes.source.invalid',
      'volumes[1].destination deployment.volumes.destination.invalid',
      'volumes[1].permission deployment.volumes.permission.unsupported',
      'volumes[2].key deployment.volumes.key.required',
      'volumes[3].source deployment.volumes.source.invalid',
      'volumes[3].destination deployment.volumes.destination.duplicate',
      'volumes[3].key deployment.volumes.key.unexpected',
    ],
  ],
  [
    'health checks: types and required fields',
    {
      ...minimal,
      health_checks: [
        { type: 'grpc' },
        { type: 'tcp' },
        { type: 'http' },
        { type: 'command', command: [] },
        { type: 'tcp', port: 0, url: 'http://x' },
        { type: 'http', url: 'ftp://x/' },
      ],
    },
    [
      'health_checks[0].type deployment.health_checks.type.unsupported',
      'health_checks[1].port deployment.health_checks.port.required',
      'health_checks[2].url deployment.health_checks.url.required',
      'health_checks[3].command deployment.health_checks.command.required',
      'health_checks[4].url deployment.health_checks.url.unexpected',
      'health_checks[4].port deployment.health_checks.port.out_of_range',
      'health_checks[5].url deployment.health_checks.url.invalid',
    ],
  ],
  [
    'health checks: durations, threshold, on_failure',
    { ...minimal, health_checks: [{ type: 'tcp', port: 80, interval: '1m', timeout: '0s', threshold: 0, on_failure: 'ignore' }] },
    [
      'health_checks[0].interval deployment.health_checks.interval.invalid',
      'health_checks[0].timeout deployment.health_checks.timeout.invalid',
      'health_checks[0].threshold deployment.health_checks.threshold.out_of_range',
      'health_checks[0].on_failure deployment.health_checks.on_failure.unsupported',
    ],
  ],
  [
    'health checks: command checks refused on cloud-hypervisor',
    { ...minimal, runtime: 'cloud-hypervisor', image: '/vm.img', health_checks: [{ type: 'command', command: ['true'] }] },
    ['health_checks[0].type deployment.health_checks.command.cloud_hypervisor_unsupported'],
  ],
  ['config user', { ...minimal, config: { user: 'root; rm' } }, ['config.user deployment.config.user.invalid']],
  ['registry auth empty username', { ...minimal, config: { registry_auth: { username: '', password: 'p' } } }, ['config.registry_auth.username deployment.config.registry_auth.invalid']],
  ['network mode', { ...minimal, network: { mode: 'overlay' } }, ['network.mode deployment.network.mode.unsupported']],
  ['too many ports', { ...minimal, ports: Array.from({ length: 65 }, (_, i) => ({ published: 1000 + i, target: 80 })) }, ['ports deployment.ports.too_many']],
  ['too many health checks', { ...minimal, health_checks: Array.from({ length: 9 }, () => ({ type: 'tcp', port: 80 })) }, ['health_checks deployment.health_checks.too_many']],
  ['too many labels', { ...minimal, labels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }, ['labels deployment.labels.too_many']],
  ['command argument too long', { ...minimal, command: ['sh', 'x'.repeat(8193)] }, ['command[1] deployment.command.argument.invalid']],
  ['command argument with NUL', { ...minimal, command: ['a\u0000b'] }, ['command[0] deployment.command.argument.invalid']],
  ['too many environment entries', { ...minimal, environment: Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`K${i}`, 'v'])) }, ['environment deployment.environment.too_many']],
  ['environment value too long', { ...minimal, environment: { BIG: 'x'.repeat(32_769) } }, ['environment.BIG deployment.environment.value.length']],
  ['too many volumes', { ...minimal, volumes: Array.from({ length: 33 }, (_, i) => ({ type: 'volume', source: `v${i}x`, destination: `/m${i}`, driver: 'local', permission: 'rw' })) }, ['volumes deployment.volumes.too_many']],
  [
    'volume driver and config key length',
    { ...minimal, volumes: [{ type: 'config', source: 'cfg', destination: '/c', driver: 'bad driver', permission: 'ro', key: '' }] },
    ['volumes[0].driver deployment.volumes.driver.invalid', 'volumes[0].key deployment.volumes.key.invalid'],
  ],
  [
    'command check with a field of another type and an oversized command',
    { ...minimal, health_checks: [{ type: 'command', command: Array.from({ length: 257 }, () => 'a'), port: 80 }] },
    ['health_checks[0].port deployment.health_checks.port.unexpected', 'health_checks[0].command deployment.health_checks.command.invalid'],
  ],
  [
    'http check with a command',
    { ...minimal, health_checks: [{ type: 'http', url: 'http://localhost/', command: ['x'] }] },
    ['health_checks[0].command deployment.health_checks.command.unexpected'],
  ],
  ['interval too long', { ...minimal, health_checks: [{ type: 'tcp', port: 1, interval: '3601s' }] }, ['health_checks[0].interval deployment.health_checks.interval.invalid']],
  ['cpu as a bad JSON number', { ...minimal, resources: { limits: { cpu: 0 } } }, ['resources.limits.cpu deployment.resources.limits.cpu.invalid']],
];

for (const [label, body, expected] of invalidCases) {
  test(`invalid: ${label}`, () => {
    assert.deepEqual(codes(body), expected);
  });
}

test('every violation is reported at once, each with a message', () => {
  const found = violations({
    name: 'Bad Name',
    runtime: 'docker',
    namespace: 'x',
    image: 'img',
    kind: 'job',
    replicas: 3,
    ports: [{ published: 80, target: 80 }],
    environment: { 'MY-KEY': 'v' },
    resources: { limits: { cpu: 'lots' } },
    config: { image_pull_policy: 'Maybe' },
  });
  const seen = new Set(found.map((v) => v.code));
  for (const code of [
    'deployment.name.format',
    'deployment.namespace.length',
    'deployment.ports.replicas_conflict',
    'deployment.replicas.ports_conflict',
    'deployment.replicas.job_must_be_one',
    'deployment.environment.key.invalid',
    'deployment.resources.limits.cpu.invalid',
    'deployment.config.image_pull_policy.unsupported',
  ]) {
    assert.ok(seen.has(code), `missing ${code}`);
  }
  for (const v of found) assert.ok(v.message.length > 0);
});

test('an environment key named __proto__ is an own key, not a prototype change', () => {
  const body = JSON.parse('{"name":"a","runtime":"docker","namespace":"ns","image":"x","environment":{"__proto__":"v"}}') as unknown;
  const spec = valid(body);
  assert.equal(Object.getPrototypeOf(spec.environment), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(spec.environment, '__proto__')?.value, 'v');
});

test('zero replicas is accepted for a worker (scaled to nothing)', () => {
  assert.equal(valid({ ...minimal, replicas: 0 }).replicas, 0);
});

test('parseDuration accepts ms and s only', () => {
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration('10s'), 10_000);
  assert.equal(parseDuration('0s'), 0);
  for (const bad of ['1m', '1h', '1.5s', '', 's', ' 1s', '-1s', '10']) assert.equal(parseDuration(bad), null, bad);
});

test('publicSpec drops the registry password and nothing else', () => {
  const spec = valid({ ...minimal, config: { registry_auth: { username: 'u', password: 'hunter2', server_address: 'r.example' } } });
  const shown = publicSpec(spec);
  assert.deepEqual(shown.config, { image_pull_policy: 'IfNotPresent', registry_auth: { username: 'u', server_address: 'r.example' } });
  assert.equal(JSON.stringify(shown).includes('hunter2'), false);
  assert.equal(spec.config.registry_auth?.password, 'hunter2', 'the stored spec is untouched');
  assert.deepEqual(publicSpec(valid(minimal)), valid(minimal));
});
