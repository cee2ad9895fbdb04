// The authenticator's cache must never outlive a change: revocation (here or by another connection), user
// deletion, expiry, and last_used_at at most once a minute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate, openDatabase } from '../../src/store/db.js';
import { createTokenStore } from '../../src/store/tokens.js';
import { createUserStore } from '../../src/store/users.js';
import { createAuthenticator } from '../../src/api/auth-hook.js';
import { databaseVersion } from '../../src/api/read-cache.js';
import { generateToken, hashToken, tokenDisplayPrefix } from '../../src/crypto/token.js';

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-authn-'));
  const db = openDatabase(join(dir, 'svc.db'));
  migrate(db);
  const other = openDatabase(join(dir, 'svc.db'));
  const users = createUserStore(db);
  const tokens = createTokenStore(db);
  let clock = Date.parse('2030-01-01T00:00:00Z');
  const authenticator = createAuthenticator(tokens, () => new Date(clock), () => databaseVersion(db));
  const user = users.insert('alice', 'scrypt$x', new Date(clock));
  assert.ok(user);
  const mint = (expireAt: string | null = null) => {
    const token = generateToken();
    const row = tokens.insert(
      { userId: user.id, kind: 'pat', name: 't', tokenHash: hashToken(token), tokenPrefix: tokenDisplayPrefix(token), scopes: ['secrets:read'], namespaces: ['prod'], expireAt },
      new Date(clock),
    );
    return { token, id: row.id };
  };
  return {
    db,
    other,
    users,
    tokens,
    authenticator,
    user,
    mint,
    advance: (ms: number) => (clock += ms),
    close() {
      other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a cached token is refused right after it is revoked, here or by another connection', () => {
  const t = setup();
  try {
    const a = t.mint();
    const b = t.mint();
    assert.deepEqual(t.authenticator.authenticate(a.token)?.namespaces, ['prod']);
    assert.equal(t.authenticator.authenticate(a.token)?.username, 'alice');
    t.tokens.revoke(a.id, new Date());
    assert.equal(t.authenticator.authenticate(a.token), null);
    assert.ok(t.authenticator.authenticate(b.token));
    t.other.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ?').run(new Date().toISOString(), b.id);
    assert.equal(t.authenticator.authenticate(b.token), null);
  } finally {
    t.close();
  }
});

test('deleting the user ends the cached token; expiry is checked on every use', () => {
  const t = setup();
  try {
    const soon = t.mint('2030-01-01T00:00:10Z');
    assert.ok(t.authenticator.authenticate(soon.token));
    t.advance(9_999);
    assert.ok(t.authenticator.authenticate(soon.token));
    t.advance(1);
    assert.equal(t.authenticator.authenticate(soon.token), null);
    const plain = t.mint();
    assert.ok(t.authenticator.authenticate(plain.token));
    t.users.remove(t.user.id);
    assert.equal(t.authenticator.authenticate(plain.token), null);
  } finally {
    t.close();
  }
});

test('last_used_at is written on first use, then at most once a minute', () => {
  const t = setup();
  try {
    const a = t.mint();
    const lastUsed = () => t.tokens.patOf(t.user.id, a.id)?.last_used_at;
    assert.equal(lastUsed(), null);
    t.authenticator.authenticate(a.token);
    const first = lastUsed();
    assert.equal(first, '2030-01-01T00:00:00.000Z');
    t.advance(59_000);
    t.authenticator.authenticate(a.token);
    assert.equal(lastUsed(), first);
    t.advance(1_000);
    t.authenticator.authenticate(a.token);
    assert.equal(lastUsed(), '2030-01-01T00:01:00.000Z');
  } finally {
    t.close();
  }
});

test('malformed and unknown tokens are refused without touching anything', () => {
  const t = setup();
  try {
    const before = databaseVersion(t.db);
    assert.equal(t.authenticator.authenticate('svc_pat_' + '0'.repeat(64)), null);
    assert.equal(t.authenticator.authenticate('nope'), null);
    assert.equal(databaseVersion(t.db), before);
  } finally {
    t.close();
  }
});
