// namespaces table. SQL only; the name rules live in domain/namespace.ts.
import { randomUUID } from 'node:crypto';
import type { Db } from './db.js';
import { isUniqueViolation, jsonList, prepared } from './prepared.js';

export interface NamespaceRecord {
  id: string;
  name: string;
  created_at: string;
  updated_at: string | null;
}

const COLUMNS = 'id, name, created_at, updated_at';

/** `visible` null = every namespace; otherwise only those names. Ordered by name. */
export function listNamespaces(db: Db, visible: readonly string[] | null): NamespaceRecord[] {
  if (visible === null) return prepared<[], NamespaceRecord>(db, `SELECT ${COLUMNS} FROM namespaces ORDER BY name`).all();
  return prepared<[string], NamespaceRecord>(
    db,
    `SELECT ${COLUMNS} FROM namespaces WHERE name IN (SELECT value FROM json_each(?)) ORDER BY name`,
  ).all(jsonList(visible));
}

export function getNamespace(db: Db, id: string): NamespaceRecord | null {
  return prepared<[string], NamespaceRecord>(db, `SELECT ${COLUMNS} FROM namespaces WHERE id = ?`).get(id) ?? null;
}

export function getNamespaceByName(db: Db, name: string): NamespaceRecord | null {
  return prepared<[string], NamespaceRecord>(db, `SELECT ${COLUMNS} FROM namespaces WHERE name = ?`).get(name) ?? null;
}

export function namespaceExists(db: Db, name: string): boolean {
  return prepared<[string], { found: number }>(db, 'SELECT 1 AS found FROM namespaces WHERE name = ?').get(name) !== undefined;
}

/** Null when the name is taken. */
export function createNamespace(db: Db, name: string, now: Date): NamespaceRecord | null {
  const record: NamespaceRecord = { id: randomUUID(), name, created_at: now.toISOString(), updated_at: null };
  try {
    prepared(db, 'INSERT INTO namespaces (id, name, created_at) VALUES (?, ?, ?)').run(record.id, name, record.created_at);
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
  return record;
}

/**
 * The namespace named `name`, created when it does not exist (a deployment applied to a new namespace).
 * The caller validates the name first (domain/namespace.ts). Safe inside the caller's transaction.
 */
export function ensureNamespace(db: Db, name: string, now: Date = new Date()): NamespaceRecord {
  prepared(db, 'INSERT INTO namespaces (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING').run(
    randomUUID(),
    name,
    now.toISOString(),
  );
  const record = getNamespaceByName(db, name);
  if (!record) throw new Error(`namespace '${name}' vanished while being ensured`);
  return record;
}
