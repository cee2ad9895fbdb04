// users table. Thin: SQL only, no rules (domain/user.ts) and no hashing (crypto/password.ts).
import { randomUUID } from 'node:crypto';
import type { Db } from './db.js';

export interface UserRow {
  id: string;
  username: string;
  password_hash: string;
  status: string;
  created_at: string;
  updated_at: string | null;
  login_at: string | null;
}

export interface UserStore {
  list(): UserRow[];
  get(id: string): UserRow | undefined;
  byUsername(username: string): UserRow | undefined;
  count(): number;
  /** Returns null when the username is taken (case-insensitively). */
  insert(username: string, passwordHash: string, now: Date): UserRow | null;
  /** Returns 'conflict' when the new username is taken; undefined when the id is unknown. */
  update(id: string, changes: { username?: string; passwordHash?: string }, now: Date): UserRow | 'conflict' | undefined;
  recordLogin(id: string, now: Date): void;
  /** Deletes the user and, by cascade, every token of theirs. */
  remove(id: string): boolean;
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && (error as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

export function createUserStore(db: Db): UserStore {
  const listStmt = db.prepare<[], UserRow>('SELECT * FROM users ORDER BY created_at, username');
  const getStmt = db.prepare<[string], UserRow>('SELECT * FROM users WHERE id = ?');
  const byNameStmt = db.prepare<[string], UserRow>('SELECT * FROM users WHERE username = ?');
  const countStmt = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM users');
  const insertStmt = db.prepare(
    "INSERT INTO users (id, username, password_hash, status, created_at) VALUES (?, ?, ?, 'active', ?)",
  );
  const loginStmt = db.prepare('UPDATE users SET login_at = ? WHERE id = ?');
  const removeStmt = db.prepare('DELETE FROM users WHERE id = ?');

  return {
    list: () => listStmt.all(),
    get: (id) => getStmt.get(id),
    byUsername: (username) => byNameStmt.get(username),
    count: () => countStmt.get()?.n ?? 0,
    insert(username, passwordHash, now) {
      const id = randomUUID();
      try {
        insertStmt.run(id, username, passwordHash, now.toISOString());
      } catch (error) {
        if (isUniqueViolation(error)) return null;
        throw error;
      }
      return getStmt.get(id) ?? null;
    },
    update(id, changes, now) {
      const current = getStmt.get(id);
      if (!current) return undefined;
      if (changes.username === undefined && changes.passwordHash === undefined) return current;
      try {
        db.prepare('UPDATE users SET username = ?, password_hash = ?, updated_at = ? WHERE id = ?').run(
          changes.username ?? current.username,
          changes.passwordHash ?? current.password_hash,
          now.toISOString(),
          id,
        );
      } catch (error) {
        if (isUniqueViolation(error)) return 'conflict';
        throw error;
      }
      return getStmt.get(id);
    },
    recordLogin(id, now) {
      loginStmt.run(now.toISOString(), id);
    },
    remove: (id) => removeStmt.run(id).changes > 0,
  };
}
