// resolveInstanceSpec on a real SQLite file: secrets decrypted, configs rendered to files (or config_error /
// file_system_error), named volumes registered, quantities parsed, config.user / pull policy / registry auth.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { RuntimeError } from '../../src/runtime/runtime.js';
import { ResolveError, configDirOf, removeConfigFiles, resolveInstanceSpec } from '../../src/scheduler/instance-spec.js';
import { createConfig } from '../../src/store/configs.js';
import { ensureNamespace } from '../../src/store/namespaces.js';
import { createSecret } from '../../src/store/secrets.js';
import { getVolumeByName } from '../../src/store/volumes.js';
import { testSpec } from './scheduler-support.js';
import { withTempDb } from './resources-support.js';

const box = createSecretBox(randomBytes(32));

test('every field resolved: env with secret, config file, volume registered, bind ro, quantities, user, auth', () => {
  withTempDb((db) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-d2t-data-'));
    try {
      ensureNamespace(db, 'ns1');
      createSecret(db, box, { namespace: 'ns1', name: 'pw', value: 'hunter2' }, new Date());
      createConfig(db, { namespace: 'ns1', name: 'app', data: '{"port": 8080, "name": "web"}', labels: '' }, new Date());
      const spec = testSpec('ns1', {
        environment: { A: 'plain', B: { secretRef: 'pw' } },
        volumes: [
          { type: 'config', source: 'app', key: 'port', destination: '/etc/port', driver: 'local', permission: 'ro' },
          { type: 'volume', source: 'data', destination: '/data', driver: 'local', permission: 'rw' },
          { type: 'bind', source: '/srv/x', destination: '/x', driver: 'local', permission: 'ro' },
        ],
        resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
        config: { image_pull_policy: 'Always', user: '1000:1000', registry_auth: { username: 'u', password: 'p', server_address: 'r.example' } },
        ports: [{ published: 8080, target: 80 }],
      });
      const resolved = resolveInstanceSpec({ db, secretBox: box, dataDir }, 'dep-1', spec, 'hash-1');
      assert.deepEqual(resolved.env, { A: 'plain', B: 'hunter2' });
      const file = join(configDirOf(dataDir, 'dep-1'), '0');
      assert.deepEqual(resolved.mounts, [
        { type: 'file', hostPath: file, destination: '/etc/port' },
        { type: 'volume', source: 'data', destination: '/data', readOnly: false, driver: 'local' },
        { type: 'bind', source: '/srv/x', destination: '/x', readOnly: true },
      ]);
      assert.equal(readFileSync(file, 'utf8'), '8080', 'a non-string JSON value is rendered as JSON');
      assert.equal(statSync(file).mode & 0o777, 0o644);
      assert.ok(getVolumeByName(db, 'ns1', 'data'), 'the named volume is registered');
      assert.deepEqual(resolved.resources, { nanoCpus: 500_000_000, memoryBytes: 268_435_456, memoryReservationBytes: 134_217_728 });
      assert.equal(resolved.user, '1000:1000');
      assert.equal(resolved.imagePullPolicy, 'Always');
      assert.deepEqual(resolved.registryAuth, { username: 'u', password: 'p', serveraddress: 'r.example' });
      assert.deepEqual(resolved.ports, [{ published: 8080, target: 80 }]);
      assert.equal(resolved.specHash, 'hash-1');
      assert.deepEqual(resolved.command, spec.command);
      removeConfigFiles(dataDir, 'dep-1');
      assert.throws(() => statSync(file));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

function failureOf(run: () => unknown): ResolveError {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ResolveError);
    assert.ok(error instanceof RuntimeError);
    return error;
  }
  assert.fail('expected a failure');
}

test('failures: missing secret → failed/SecretNotFound; config missing, key missing, not an object → config_error; unwritable data dir → file_system_error', () => {
  withTempDb((db) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-d2t-data-'));
    try {
      ensureNamespace(db, 'ns1');
      createConfig(db, { namespace: 'ns1', name: 'list', data: '[1,2]', labels: '' }, new Date());
      createConfig(db, { namespace: 'ns1', name: 'obj', data: '{"a":"1"}', labels: '' }, new Date());
      const ctx = { db, secretBox: box, dataDir };
      const secret = failureOf(() => resolveInstanceSpec(ctx, 'd', testSpec('ns1', { environment: { T: { secretRef: 'nope' } } }), 'h'));
      assert.equal(secret.status, 'failed');
      assert.equal(secret.reason, 'SecretNotFound');
      assert.equal(secret.category, 'user');
      const mount = { type: 'config' as const, destination: '/c', driver: 'local', permission: 'ro' as const };
      for (const [source, key, why] of [
        ['absent', 'a', /does not exist/],
        ['obj', 'b', /has no key 'b'/],
        ['list', 'a', /not a JSON object/],
      ] as const) {
        const failure = failureOf(() => resolveInstanceSpec(ctx, 'd', testSpec('ns1', { volumes: [{ ...mount, source, key }] }), 'h'));
        assert.equal(failure.status, 'config_error');
        assert.match(failure.message, why);
      }
      const blocked = join(dataDir, 'blocked');
      writeFileSync(blocked, 'a file where a directory is needed');
      const fs = failureOf(() =>
        resolveInstanceSpec({ ...ctx, dataDir: blocked }, 'd', testSpec('ns1', { volumes: [{ ...mount, source: 'obj', key: 'a' }] }), 'h'),
      );
      assert.equal(fs.status, 'file_system_error');
      assert.equal(fs.category, 'host');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

test('an undecryptable secret (other key) is a host error, and its value never appears', () => {
  withTempDb((db) => {
    ensureNamespace(db, 'ns1');
    createSecret(db, createSecretBox(randomBytes(32)), { namespace: 'ns1', name: 'pw', value: 'v' }, new Date());
    const failure = failureOf(() =>
      resolveInstanceSpec({ db, secretBox: box, dataDir: tmpdir() }, 'd', testSpec('ns1', { environment: { T: { secretRef: 'pw' } } }), 'h'),
    );
    assert.equal(failure.status, 'error');
    assert.equal(failure.category, 'host');
  });
});
