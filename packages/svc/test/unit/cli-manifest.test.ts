import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifestText, readManifest } from '../../src/cli/manifest.js';

const env = (values: Record<string, string>) => (name: string) => values[name];

function read(text: string, values: Record<string, string> = {}) {
  const parsed = parseManifestText(text, 'm.yaml');
  assert.deepEqual(parsed.problems, []);
  return readManifest(parsed.doc, env(values));
}

test('YAML manifest: namespaces, defaults, labels as list, volume defaults, interpolation', () => {
  const { manifest, problems } = read(
    `
namespaces:
  prod: {}
  $EXTRA_NS:
deployments:
  web-$SUFFIX:
    namespace: \${NS}
    image: nginx:\${TAG}
    command: ["sh", "-c", "echo $GREETING $$HOME"]
    labels:
      - app: web
      - tier: 3
    environment:
      MODE: $MODE
      PORT: 8080
      DB_PASSWORD: { secretRef: db-password }
    volumes:
      - { type: volume, source: data, destination: /data }
      - { type: config, source: app, destination: /etc/app.json, key: app.json, permission: rw }
      - { type: bind, source: /srv, destination: /srv, permission: ro, driver: custom }
    ports: ["8080:80", { target: 443 }]
`,
    { EXTRA_NS: 'staging', SUFFIX: 'a', NS: 'prod', TAG: '1.25', GREETING: 'hi', MODE: 'fast' },
  );
  assert.deepEqual(problems, []);
  assert.deepEqual(manifest.namespaces, ['prod', 'staging']);
  const [entry] = manifest.deployments;
  assert.equal(entry!.key, 'web-$SUFFIX');
  assert.deepEqual(entry!.body, {
    name: 'web-a',
    namespace: 'prod',
    runtime: 'docker',
    kind: 'worker',
    replicas: 1,
    image: 'nginx:1.25',
    labels: { app: 'web', tier: '3' },
    environment: { MODE: 'fast', PORT: '8080', DB_PASSWORD: { secretRef: 'db-password' } },
    volumes: [
      { type: 'volume', source: 'data', destination: '/data', driver: 'local', permission: 'rw' },
      { type: 'config', source: 'app', destination: '/etc/app.json', driver: 'local', permission: 'ro', key: 'app.json' },
      { type: 'bind', source: '/srv', destination: '/srv', driver: 'custom', permission: 'ro' },
    ],
    ports: [{ published: 8080, target: 80 }, { target: 443 }],
    command: ['sh', '-c', 'echo hi $HOME'],
  });
});

test('JSON manifests are read too', () => {
  const { manifest, problems } = read(JSON.stringify({ deployments: { api: { namespace: 'ns1', image: 'busybox', kind: 'job', labels: { a: 'b' } } } }));
  assert.deepEqual(problems, []);
  assert.equal(manifest.deployments[0]!.body.kind, 'job');
  assert.deepEqual(manifest.deployments[0]!.body.labels, { a: 'b' });
});

test('every problem is reported with its property path', () => {
  const { problems } = read(`
deployments:
  web:
    image: $MISSING
    replicas: two
    labels: [ { a: 1, b: 2 } ]
    volumes: [ { type: nfs, destination: /x } ]
    ports: [ "eighty" ]
    environment: { KEY: [1] }
    imagee: typo
  other: 5
unknown: 1
`);
  const paths = problems.map((p) => p.path);
  for (const expected of [
    'deployments.web.image',
    'deployments.web.replicas',
    'deployments.web.labels[0]',
    'deployments.web.volumes[0].type',
    'deployments.web.volumes[0].source',
    'deployments.web.ports[0]',
    'deployments.web.environment.KEY',
    'deployments.web.imagee',
    'deployments.other',
    'unknown',
  ]) {
    assert.ok(paths.includes(expected), `missing problem at ${expected}: ${JSON.stringify(problems)}`);
  }
  assert.match(problems.find((p) => p.path === 'deployments.web.image')!.message, /variable 'MISSING' is not defined/);
});

test('two entries naming the same namespace/name are refused', () => {
  const { problems } = read(`
deployments:
  a: { name: web, namespace: prod, image: x }
  b: { name: web, namespace: prod, image: y }
`);
  assert.deepEqual(problems.map((p) => p.path), ['deployments.b']);
});

test('invalid YAML gives one problem naming the file', () => {
  const parsed = parseManifestText('deployments: [unclosed', 'broken.yaml');
  assert.equal(parsed.problems.length, 1);
  assert.equal(parsed.problems[0]!.path, 'broken.yaml');
});

test('duplicate keys in YAML are refused', () => {
  const parsed = parseManifestText('deployments:\n  a: {image: x}\n  a: {image: y}\n', 'dup.yaml');
  assert.equal(parsed.problems.length, 1);
});
