// Prepared statements cached per database handle, so the store functions can stay plain functions of `db`
// and still pay for SQL compilation once (the outbox enqueue runs on the deployment status-change path).
import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

const caches = new WeakMap<Db, Map<string, Statement<unknown[], unknown>>>();

export function prepared<P extends unknown[] = unknown[], R = unknown>(db: Db, sql: string): Statement<P, R> {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let statement = cache.get(sql);
  if (!statement) {
    statement = db.prepare<unknown[], unknown>(sql);
    cache.set(sql, statement);
  }
  // The cache key is the SQL text, and the caller's type parameters describe that same SQL.
  return statement as unknown as Statement<P, R>;
}

export function isUniqueViolation(error: unknown): boolean {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A JSON array parameter for `IN (SELECT value FROM json_each(?))`, so any number of values binds as one. */
export function jsonList(values: readonly string[]): string {
  return JSON.stringify(values);
}
