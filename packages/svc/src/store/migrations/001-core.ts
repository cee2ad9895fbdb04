// Users and the one token table (sessions and PATs). Owned by the auth area.
// Sessions and PATs differ only by `kind` (spec "Authentication" 1): one lookup path by `token_hash`.
import type { Migration } from './types.js';

export const CORE_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_core',
    up: `
      CREATE TABLE users (
        id TEXT PRIMARY KEY,
        -- NOCASE: 'Admin' and 'admin' would be indistinguishable to a person reading a list.
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'active',
        created_at TEXT NOT NULL,
        updated_at TEXT,
        login_at TEXT
      );
      CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('session', 'pat')),
        name TEXT NOT NULL,
        -- lowercase hex SHA-256 of the clear token; the clear token is never stored.
        token_hash TEXT NOT NULL UNIQUE,
        token_prefix TEXT NOT NULL,
        scopes TEXT NOT NULL,
        namespaces TEXT NOT NULL,
        expire_at TEXT,
        revoked_at TEXT,
        last_used_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX tokens_by_user ON tokens (user_id, kind, created_at);
    `,
  },
];
