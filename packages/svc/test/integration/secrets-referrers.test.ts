import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { findReferrers, INACTIVE_DEPLOYMENT_STATUSES } from '../../src/store/referrers.js';
import { createNamespace, ensureNamespace, listNamespaces } from '../../src/store/namespaces.js';
import { createSecret, decryptSecretValue, deleteSecret } from '../../src/store/secrets.js';
import { deleteVolume, getVolumeByName, registerVolume } from '../../src/store/volumes.js';
import { createConfig, readConfigKey } from '../../src/store/configs.js';
import { insertDeployment, withTempDb } from './resources-support.js';

const now = new Date('2026-01-02T03:04:05.000Z');

const volumeMount = (source: string, type = 'volume') => ({ type, source, destination: '/data', driver: 'local', permission: 'rw' });

test('secret referrers: secretRef values in environment of active deployments of the same namespace', () => {
  withTempDb((db) => {
    insertDeployment(db, 'prod', 'web', 'running', { environment: { A: 'plain', DB: { secretRef: 'db-pass' } } });
    insertDeployment(db, 'prod', 'api', 'pending', { environment: { X: { secretRef: 'db-pass' }, Y: { secretRef: 'db-pass' } } });
    insertDeployment(db, 'prod', 'retrying', 'image_pull_back_off', { environment: { X: { secretRef: 'db-pass' } } });
    insertDeployment(db, 'prod', 'plain', 'running', { environment: { DB: 'db-pass' } });
    insertDeployment(db, 'prod', 'other', 'running', { environment: { DB: { secretRef: 'other' } } });
    insertDeployment(db, 'staging', 'web', 'running', { environment: { DB: { secretRef: 'db-pass' } } });
    insertDeployment(db, 'prod', 'noenv', 'running', { volumes: [] });
    for (const status of INACTIVE_DEPLOYMENT_STATUSES) {
      insertDeployment(db, 'prod', `gone-${status}`, status, { environment: { DB: { secretRef: 'db-pass' } } });
    }
    assert.deepEqual(findReferrers(db, { kind: 'secret', namespace: 'prod', name: 'db-pass' }), ['prod/api', 'prod/retrying', 'prod/web']);
    assert.deepEqual(findReferrers(db, { kind: 'secret', namespace: 'staging', name: 'db-pass' }), ['staging/web']);
    assert.deepEqual(findReferrers(db, { kind: 'secret', namespace: 'prod', name: 'nothing' }), []);
    // A volume of the same name is a different resource.
    assert.deepEqual(findReferrers(db, { kind: 'volume', namespace: 'prod', name: 'db-pass' }), []);
  });
});

test('volume referrers: type=volume mounts only (not bind or config of the same source)', () => {
  withTempDb((db) => {
    insertDeployment(db, 'prod', 'db', 'running', { volumes: [volumeMount('pgdata')] });
    insertDeployment(db, 'prod', 'bind', 'running', { volumes: [volumeMount('pgdata', 'bind')] });
    insertDeployment(db, 'prod', 'cfg', 'running', { volumes: [{ ...volumeMount('pgdata', 'config'), key: 'k' }] });
    insertDeployment(db, 'prod', 'done', 'completed', { volumes: [volumeMount('pgdata')] });
    insertDeployment(db, 'prod', 'two', 'creating', { volumes: [volumeMount('other'), volumeMount('pgdata')] });
    assert.deepEqual(findReferrers(db, { kind: 'volume', namespace: 'prod', name: 'pgdata' }), ['prod/db', 'prod/two']);
  });
});

test('store deletes refuse referenced resources unless forced', () => {
  withTempDb((db) => {
    const box = createSecretBox(randomBytes(32));
    createNamespace(db, 'prod', now);
    const created = createSecret(db, box, { namespace: 'prod', name: 'db-pass', value: 'hunter2' }, now);
    assert.equal(created.kind, 'created');
    if (created.kind !== 'created') return;
    insertDeployment(db, 'prod', 'web', 'running', { environment: { DB: { secretRef: 'db-pass' } } });
    assert.deepEqual(deleteSecret(db, created.record.id, false), { kind: 'referenced', deployments: ['prod/web'] });
    assert.equal(decryptSecretValue(db, box, 'prod', 'db-pass'), 'hunter2');
    assert.deepEqual(deleteSecret(db, created.record.id, true), { kind: 'deleted' });
    assert.equal(decryptSecretValue(db, box, 'prod', 'db-pass'), null);
    assert.deepEqual(deleteSecret(db, created.record.id, true), { kind: 'not_found' });

    const volume = registerVolume(db, 'fresh', 'pgdata', undefined, now);
    assert.deepEqual(listNamespaces(db, ['fresh']).map((n) => n.name), ['fresh'], 'registerVolume ensures the namespace');
    assert.equal(volume.backend_type, 'local');
    assert.deepEqual(registerVolume(db, 'fresh', 'pgdata', 'directory', now), volume, 'idempotent');
    insertDeployment(db, 'fresh', 'db', 'running', { volumes: [volumeMount('pgdata')] });
    assert.deepEqual(deleteVolume(db, volume.id, false), { kind: 'referenced', deployments: ['fresh/db'] });
    assert.deepEqual(deleteVolume(db, volume.id, true), { kind: 'deleted' });
    assert.equal(getVolumeByName(db, 'fresh', 'pgdata'), null);
  });
});

test('ensureNamespace is idempotent; secrets are bound to their row', () => {
  withTempDb((db) => {
    const first = ensureNamespace(db, 'auto', now);
    assert.deepEqual(ensureNamespace(db, 'auto', new Date()), first);
    const box = createSecretBox(randomBytes(32));
    const a = createSecret(db, box, { namespace: 'auto', name: 'a1', value: 'alpha' }, now);
    const b = createSecret(db, box, { namespace: 'auto', name: 'b1', value: 'beta' }, now);
    assert.equal(a.kind, 'created');
    assert.equal(b.kind, 'created');
    assert.deepEqual(createSecret(db, box, { namespace: 'auto', name: 'a1', value: 'again' }, now), { kind: 'duplicate' });
    assert.deepEqual(createSecret(db, box, { namespace: 'missing', name: 'a1', value: 'x' }, now), { kind: 'namespace_missing' });
    // Copying one ciphertext onto another row must not yield the other value.
    db.prepare("UPDATE secrets SET sealed_value = (SELECT sealed_value FROM secrets WHERE name = 'a1') WHERE name = 'b1'").run();
    assert.throws(() => decryptSecretValue(db, box, 'auto', 'b1'));
    assert.equal(decryptSecretValue(db, box, 'auto', 'a1'), 'alpha');
  });
});

test('readConfigKey distinguishes a missing config, a missing key and non-object data', () => {
  withTempDb((db) => {
    ensureNamespace(db, 'prod', now);
    createConfig(db, { namespace: 'prod', name: 'app', data: '{"nginx.conf":"server {}","port":8080}', labels: '' }, now);
    createConfig(db, { namespace: 'prod', name: 'raw', data: 'not json', labels: '' }, now);
    assert.deepEqual(readConfigKey(db, 'prod', 'app', 'nginx.conf'), { kind: 'found', value: 'server {}' });
    assert.deepEqual(readConfigKey(db, 'prod', 'app', 'port'), { kind: 'found', value: '8080' });
    assert.deepEqual(readConfigKey(db, 'prod', 'app', 'absent'), { kind: 'missing_key' });
    assert.deepEqual(readConfigKey(db, 'prod', 'raw', 'a'), { kind: 'not_an_object' });
    assert.deepEqual(readConfigKey(db, 'prod', 'nope', 'a'), { kind: 'missing_config' });
    assert.deepEqual(readConfigKey(db, 'other', 'app', 'port'), { kind: 'missing_config' });
  });
});
