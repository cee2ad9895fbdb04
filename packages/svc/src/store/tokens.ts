// tokens table: sessions and PATs in one table, looked up by the SHA-256 of the presented token.
import { randomUUID } from 'node:crypto';
import type { Db } from './db.js';
import type { Scope } from '../api/context.js';
import { isScope } from '../api/context.js';

export type TokenKind = 'session' | 'pat';

export interface TokenRow {
  id: string;
  user_id: string;
  kind: TokenKind;
  name: string;
  token_hash: string;
  token_prefix: string;
  scopes: string;
  namespaces: string;
  expire_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

/** The row joined with its owner, as the auth hook needs it. */
export interface AuthTokenRow extends TokenRow {
  username: string;
}

export interface NewToken {
  userId: string;
  kind: TokenKind;
  name: string;
  tokenHash: string;
  tokenPrefix: string;
  scopes: readonly Scope[];
  namespaces: readonly string[];
  expireAt: string | null;
}

export interface TokenStore {
  insert(token: NewToken, now: Date): TokenRow;
  byHash(hash: string): AuthTokenRow | undefined;
  /** A PAT of this user; sessions and other users' tokens are invisible here. */
  patOf(userId: string, id: string): TokenRow | undefined;
  patsOf(userId: string): TokenRow[];
  /** Sets revoked_at once; true when the token was active before. */
  revoke(id: string, now: Date): boolean;
  revokeByHash(hash: string, now: Date): void;
  /** Revokes every active session of a user except `keepTokenId` (after a password change). */
  revokeSessionsOf(userId: string, keepTokenId: string | null, now: Date): number;
  touch(id: string, now: Date): void;
  /** Replaces a PAT in one transaction: the old one is revoked, the new one keeps its name, scopes, namespaces, expiry. */
  rotate(old: TokenRow, tokenHash: string, tokenPrefix: string, now: Date): TokenRow;
}

/** Decodes the scopes column; unknown or corrupted entries are dropped, which can only narrow a token's rights. */
export function decodeScopes(json: string): Scope[] {
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed) ? parsed.filter((s): s is Scope => typeof s === 'string' && isScope(s)) : [];
}

export function decodeNamespaces(json: string): string[] {
  const parsed: unknown = JSON.parse(json);
  if (!Array.isArray(parsed) || !parsed.every((s) => typeof s === 'string')) {
    // A restriction we cannot read must not widen into "all namespaces".
    throw new Error('tokens.namespaces is corrupted');
  }
  return parsed;
}

export function createTokenStore(db: Db): TokenStore {
  const insertStmt = db.prepare(
    `INSERT INTO tokens (id, user_id, kind, name, token_hash, token_prefix, scopes, namespaces, expire_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const getStmt = db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE id = ?');
  const byHashStmt = db.prepare<[string], AuthTokenRow>(
    'SELECT tokens.*, users.username AS username FROM tokens JOIN users ON users.id = tokens.user_id WHERE token_hash = ?',
  );
  const patOfStmt = db.prepare<[string, string], TokenRow>("SELECT * FROM tokens WHERE id = ? AND user_id = ? AND kind = 'pat'");
  const patsOfStmt = db.prepare<[string], TokenRow>(
    "SELECT * FROM tokens WHERE user_id = ? AND kind = 'pat' ORDER BY created_at, id",
  );
  const revokeStmt = db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL');
  const revokeByHashStmt = db.prepare('UPDATE tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL');
  const touchStmt = db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?');
  const revokeSessionsStmt = db.prepare(
    "UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND kind = 'session' AND revoked_at IS NULL AND id IS NOT ?",
  );

  function insert(token: NewToken, now: Date): TokenRow {
    const id = randomUUID();
    insertStmt.run(
      id,
      token.userId,
      token.kind,
      token.name,
      token.tokenHash,
      token.tokenPrefix,
      JSON.stringify(token.scopes),
      JSON.stringify(token.namespaces),
      token.expireAt,
      now.toISOString(),
    );
    const row = getStmt.get(id);
    if (!row) throw new Error('token row vanished after insert');
    return row;
  }

  return {
    insert,
    byHash: (hash) => byHashStmt.get(hash),
    patOf: (userId, id) => patOfStmt.get(id, userId),
    patsOf: (userId) => patsOfStmt.all(userId),
    revoke: (id, now) => revokeStmt.run(now.toISOString(), id).changes > 0,
    revokeByHash(hash, now) {
      revokeByHashStmt.run(now.toISOString(), hash);
    },
    revokeSessionsOf: (userId, keepTokenId, now) => revokeSessionsStmt.run(now.toISOString(), userId, keepTokenId).changes,
    touch(id, now) {
      touchStmt.run(now.toISOString(), id);
    },
    rotate: db.transaction((old: TokenRow, tokenHash: string, tokenPrefix: string, now: Date): TokenRow => {
      revokeStmt.run(now.toISOString(), old.id);
      return insert(
        {
          userId: old.user_id,
          kind: old.kind,
          name: old.name,
          tokenHash,
          tokenPrefix,
          scopes: decodeScopes(old.scopes),
          namespaces: decodeNamespaces(old.namespaces),
          expireAt: old.expire_at,
        },
        now,
      );
    }),
  };
}
