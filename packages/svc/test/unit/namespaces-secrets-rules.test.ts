import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateNamespaceInput } from '../../src/domain/namespace.js';
import { SECRET_VALUE_MAX_BYTES, validateSecretInput } from '../../src/domain/secret.js';
import { validateVolumeInput, isBackendType } from '../../src/domain/volume.js';
import { selectConfigKey, validateConfigCreate, validateConfigReplace } from '../../src/domain/config.js';

const codes = (violations: Array<{ code: string }>) => violations.map((v) => v.code).sort();

test('namespace name: 2-63 characters, lowercase DNS label', () => {
  for (const name of ['ab', 'a1', 'prod', 'team-a', 'a'.repeat(63), '0-0']) assert.deepEqual(validateNamespaceInput({ name }), [], name);
  assert.deepEqual(codes(validateNamespaceInput({ name: 'a' })), ['namespace.name.length']);
  assert.deepEqual(codes(validateNamespaceInput({ name: 'a'.repeat(64) })), ['namespace.name.length']);
  assert.deepEqual(codes(validateNamespaceInput({ name: '' })), ['namespace.name.format', 'namespace.name.length']);
  for (const name of ['Prod', '-ab', 'ab-', 'a_b', 'a.b', 'ünï', 'a b']) {
    assert.deepEqual(codes(validateNamespaceInput({ name })), ['namespace.name.format'], name);
  }
});

test('secret: name 2-253 of letters any case, digits, _ . -, alphanumeric ends; value 1 byte..1 MiB', () => {
  const ok = { namespace: 'prod', name: 'DB_Password.v2-x', value: 'x' };
  assert.deepEqual(validateSecretInput(ok), []);
  assert.deepEqual(validateSecretInput({ ...ok, name: 'A'.repeat(253), value: 'v'.repeat(SECRET_VALUE_MAX_BYTES) }), []);
  assert.deepEqual(codes(validateSecretInput({ ...ok, name: 'a' })), ['secret.name.length']);
  assert.deepEqual(codes(validateSecretInput({ ...ok, name: 'a'.repeat(254) })), ['secret.name.length']);
  for (const name of ['_ab', 'ab_', '.ab', 'a/b', 'a b', 'aé']) assert.deepEqual(codes(validateSecretInput({ ...ok, name })), ['secret.name.format'], name);
  assert.deepEqual(codes(validateSecretInput({ ...ok, value: '' })), ['secret.value.length']);
  assert.deepEqual(codes(validateSecretInput({ ...ok, value: 'v'.repeat(SECRET_VALUE_MAX_BYTES + 1) })), ['secret.value.length']);
  // Counted in UTF-8 bytes: 2-byte characters half the count of ASCII ones.
  assert.deepEqual(codes(validateSecretInput({ ...ok, value: 'é'.repeat(SECRET_VALUE_MAX_BYTES / 2 + 1) })), ['secret.value.length']);
  assert.deepEqual(codes(validateSecretInput({ ...ok, namespace: 'X' })), ['secret.namespace.format', 'secret.namespace.length']);
  assert.deepEqual(
    codes(validateSecretInput({ namespace: 'N', name: '-', value: '' })),
    ['secret.name.format', 'secret.name.length', 'secret.namespace.format', 'secret.namespace.length', 'secret.value.length'],
  );
});

test('volume: name 2-253 lowercase, digits, _ . -; backend types; label limits', () => {
  const ok = { namespace: 'prod', name: 'data_1.v-2', labels: { team: 'a' } };
  assert.deepEqual(validateVolumeInput(ok), []);
  assert.deepEqual(codes(validateVolumeInput({ ...ok, name: 'Data' })), ['volume.name.format']);
  assert.deepEqual(codes(validateVolumeInput({ ...ok, name: 'd' })), ['volume.name.length']);
  assert.deepEqual(codes(validateVolumeInput({ ...ok, name: 'd'.repeat(254) })), ['volume.name.length']);
  assert.deepEqual(codes(validateVolumeInput({ ...ok, namespace: 'p' })), ['volume.namespace.length']);
  assert.deepEqual(codes(validateVolumeInput({ ...ok, namespace: 'p_q' })), ['volume.namespace.format']);
  const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
  assert.deepEqual(codes(validateVolumeInput({ ...ok, labels: many })), ['volume.labels.length']);
  assert.deepEqual(codes(validateVolumeInput({ ...ok, labels: { k: 'v'.repeat(1001) } })), ['volume.labels.length']);
  assert.deepEqual(codes(validateVolumeInput({ ...ok, labels: { '': 'v' } })), ['volume.labels.length']);
  assert.ok(isBackendType('local') && isBackendType('directory') && !isBackendType('nfs') && !isBackendType('LOCAL'));
});

test('config: name DNS subdomain 1-253, data 1 byte..1 MiB, labels <= 1000 chars, JSON on replace', () => {
  const ok = { namespace: 'prod', name: 'nginx.conf', data: 'plain text is fine on create', labels: '' };
  assert.deepEqual(validateConfigCreate(ok), []);
  assert.deepEqual(validateConfigCreate({ ...ok, name: 'a' }), []);
  assert.deepEqual(codes(validateConfigCreate({ ...ok, name: '' })), ['config.name.format', 'config.name.length']);
  assert.deepEqual(codes(validateConfigCreate({ ...ok, name: `${'a'.repeat(250)}.bcd` })), ['config.name.length']);
  for (const name of ['A', 'a_b', '-a', 'a-', 'a..b', '.a', 'a.']) assert.deepEqual(codes(validateConfigCreate({ ...ok, name })), ['config.name.format'], name);
  assert.deepEqual(codes(validateConfigCreate({ ...ok, data: '' })), ['config.data.length']);
  assert.deepEqual(codes(validateConfigCreate({ ...ok, data: 'x'.repeat(1024 * 1024 + 1) })), ['config.data.length']);
  assert.deepEqual(codes(validateConfigCreate({ ...ok, labels: 'l'.repeat(1001) })), ['config.labels.length']);
  assert.deepEqual(validateConfigCreate({ ...ok, labels: '😀'.repeat(1000) }), [], 'labels count characters, not UTF-16 units');
  assert.deepEqual(codes(validateConfigCreate({ ...ok, namespace: 'a' })), ['config.namespace.length']);
  assert.deepEqual(codes(validateConfigCreate({ ...ok, namespace: 'A!' })), ['config.namespace.format']);

  const replace = { name: 'app', data: '{"a":1}', labels: 'x' };
  assert.deepEqual(validateConfigReplace(replace), []);
  assert.deepEqual(validateConfigReplace({ ...replace, data: '42' }), []);
  assert.deepEqual(codes(validateConfigReplace({ ...replace, data: '{"a":' })), ['config.data.invalid_json']);
  assert.deepEqual(codes(validateConfigReplace({ ...replace, data: 'not json' })), ['config.data.invalid_json']);
  assert.deepEqual(codes(validateConfigReplace({ ...replace, data: '' })), ['config.data.length']);
});

test('config key selection for config mounts', () => {
  assert.deepEqual(selectConfigKey('{"a":"text","n":5,"o":{"x":[1]}}', 'a'), { kind: 'found', value: 'text' });
  assert.deepEqual(selectConfigKey('{"a":"text","n":5,"o":{"x":[1]}}', 'n'), { kind: 'found', value: '5' });
  assert.deepEqual(selectConfigKey('{"a":"text","n":5,"o":{"x":[1]}}', 'o'), { kind: 'found', value: '{"x":[1]}' });
  assert.deepEqual(selectConfigKey('{"a":"text"}', 'b'), { kind: 'missing_key' });
  assert.deepEqual(selectConfigKey('{"a":"text"}', 'toString'), { kind: 'missing_key' });
  assert.deepEqual(selectConfigKey('[1,2]', '0'), { kind: 'not_an_object' });
  assert.deepEqual(selectConfigKey('server { }', 'a'), { kind: 'not_an_object' });
});
