// Pure rules of users and tokens: validation codes, timestamps, namespace escalation, token format and hashing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateUserChanges } from '../../src/domain/user.js';
import { namespacesBeyondCaller, parseRfc3339, tokenStatus, validateTokenRequest } from '../../src/domain/token.js';
import { generateToken, hashToken, isWellFormedToken, tokenDisplayPrefix } from '../../src/crypto/token.js';
import { createLimiter, hashPassword, KdfBusyError, verifyPassword } from '../../src/crypto/password.js';

const codes = (violations: { code: string }[]) => violations.map((v) => v.code).sort();
const NOW = new Date('2030-01-01T00:00:00Z');

test('username length and format are separate codes, both reported', () => {
  assert.deepEqual(codes(validateUserChanges({ username: '-' })), ['user.username.format', 'user.username.length']);
  assert.deepEqual(codes(validateUserChanges({ username: 'a'.repeat(51) })), ['user.username.length']);
  assert.deepEqual(codes(validateUserChanges({ username: 'ab' })), []);
  assert.deepEqual(codes(validateUserChanges({ username: 'Al.ice_-9' })), []);
  assert.deepEqual(codes(validateUserChanges({ username: '_alice' })), ['user.username.format']);
  assert.deepEqual(codes(validateUserChanges({ username: 'al ice' })), ['user.username.format']);
  assert.deepEqual(codes(validateUserChanges({ username: 'älice' })), ['user.username.format']);
});

test('password is 8-128 characters counted as code points', () => {
  assert.deepEqual(codes(validateUserChanges({ password: '1234567' })), ['user.password.length']);
  assert.deepEqual(codes(validateUserChanges({ password: '12345678' })), []);
  assert.deepEqual(codes(validateUserChanges({ password: 'x'.repeat(128) })), []);
  assert.deepEqual(codes(validateUserChanges({ password: 'x'.repeat(129) })), ['user.password.length']);
  assert.deepEqual(codes(validateUserChanges({ password: '😀'.repeat(8) })), []);
  assert.deepEqual(codes(validateUserChanges({})), []);
});

test('token request: every code, all at once', () => {
  const { violations } = validateTokenRequest({ name: '-', scopes: [], namespaces: ['A'], expire_at: 'tomorrow' }, NOW);
  assert.deepEqual(codes(violations), [
    'token.expire_at.format',
    'token.name.format',
    'token.name.length',
    'token.namespaces.format',
    'token.namespaces.length',
    'token.scopes.empty',
  ]);
  const unknown = validateTokenRequest({ name: 'ci', scopes: ['secrets:read', 'root', 'admin '], namespaces: [], expire_at: null }, NOW);
  assert.deepEqual(codes(unknown.violations), ['token.scopes.unknown', 'token.scopes.unknown']);
  assert.deepEqual(unknown.violations.map((v) => v.property_path), ['scopes[1]', 'scopes[2]']);
});

test('token request: a valid one is normalised', () => {
  const { token, violations } = validateTokenRequest(
    { name: 'ci.deploy-1', scopes: ['secrets:read', 'secrets:read'], namespaces: ['prod', 'prod'], expire_at: '2030-02-01T01:00:00+01:00' },
    NOW,
  );
  assert.deepEqual(violations, []);
  assert.deepEqual(token, { name: 'ci.deploy-1', scopes: ['secrets:read'], namespaces: ['prod'], expireAt: '2030-02-01T00:00:00.000Z' });
});

test('expire_at must be RFC 3339 and in the future', () => {
  for (const bad of ['2030-02-30T00:00:00Z', '2030-01-01', '2030-01-01T00:00:00', '1700000000', '2030-13-01T00:00:00Z', '2030-01-01T24:00:00Z']) {
    assert.equal(parseRfc3339(bad), null, bad);
  }
  assert.equal(parseRfc3339('2030-01-01t10:00:00.123456z')?.toISOString(), '2030-01-01T10:00:00.123Z');
  const past = validateTokenRequest({ name: 'ci', scopes: ['admin'], namespaces: [], expire_at: '2029-12-31T23:59:59Z' }, NOW);
  assert.deepEqual(codes(past.violations), ['token.expire_at.format']);
});

test('a restricted caller cannot mint a wider token', () => {
  assert.deepEqual(namespacesBeyondCaller([], []), []);
  assert.deepEqual(namespacesBeyondCaller(['a'], []), []);
  assert.equal(namespacesBeyondCaller([], ['a']), 'all');
  assert.deepEqual(namespacesBeyondCaller(['a', 'b'], ['a']), ['b']);
  assert.deepEqual(namespacesBeyondCaller(['a'], ['a', 'c']), []);
});

test('token status: revoked wins over expired', () => {
  assert.equal(tokenStatus({ revoked_at: null, expire_at: null }, NOW), 'active');
  assert.equal(tokenStatus({ revoked_at: null, expire_at: '2029-01-01T00:00:00Z' }, NOW), 'expired');
  assert.equal(tokenStatus({ revoked_at: '2029-01-01T00:00:00Z', expire_at: '2029-01-01T00:00:00Z' }, NOW), 'revoked');
});

test('tokens: svc_pat_ + 64 hex, SHA-256 stored, 12-character display prefix', () => {
  const token = generateToken();
  assert.match(token, /^svc_pat_[0-9a-f]{64}$/);
  assert.ok(isWellFormedToken(token));
  assert.notEqual(generateToken(), token);
  assert.match(hashToken(token), /^[0-9a-f]{64}$/);
  // SHA-256 known answer, so the stored form is the documented one.
  assert.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(tokenDisplayPrefix(token), token.slice(0, 12));
  assert.equal(tokenDisplayPrefix(token).length, 12);
  for (const bad of ['svc_pat_' + 'A'.repeat(64), 'svc_pat_' + '0'.repeat(63), 'pat_' + '0'.repeat(64), '']) assert.equal(isWellFormedToken(bad), false);
});

test('passwords: salted scrypt, verified, wrong and malformed hashes refused', async () => {
  const one = await hashPassword('correct horse');
  const two = await hashPassword('correct horse');
  assert.notEqual(one, two);
  assert.match(one, /^scrypt\$15\$8\$1\$/);
  assert.equal(await verifyPassword('correct horse', one), true);
  assert.equal(await verifyPassword('correct horsf', one), false);
  assert.equal(await verifyPassword('correct horse', 'plain'), false);
  assert.equal(await verifyPassword('correct horse', 'scrypt$99$8$1$AA==$AA=='), false);
});

test('the KDF limiter bounds concurrency and refuses beyond the waiting room', async () => {
  const limited = createLimiter(2, 3);
  let running = 0;
  let peak = 0;
  const releases: Array<() => void> = [];
  const task = () =>
    new Promise<void>((resolveTask) => {
      running++;
      peak = Math.max(peak, running);
      releases.push(() => {
        running--;
        resolveTask();
      });
    });
  let settled = false;
  const accepted = Promise.all(Array.from({ length: 5 }, () => limited(task))).then(() => (settled = true));
  await assert.rejects(limited(task), KdfBusyError);
  for (let round = 0; round < 100 && !settled; round++) {
    await new Promise((r) => setImmediate(r));
    releases.splice(0).forEach((release) => release());
  }
  await accepted;
  assert.equal(peak, 2);
  assert.equal(running, 0);
  // Free again afterwards.
  await limited(async () => undefined);
});
