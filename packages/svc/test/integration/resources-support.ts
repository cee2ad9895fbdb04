// Shared by the resource tests (namespaces-*, secrets-*, volumes-*, configs-*, webhooks-*, outbox-*): a migrated
// temp SQLite file, deployment rows written straight into the table (to exercise referrer queries before the
// deployments API exists), and the problem+json shape.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { migrate, openDatabase, type Db } from '../../src/store/db.js';

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  violations: Array<{ property_path: string; message: string; code: string }>;
}

/** Runs `run` against a fresh, migrated database file, then deletes it. */
export function withTempDb(run: (db: Db) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'svc-resources-'));
  const db = openDatabase(join(dir, 'svc.db'));
  try {
    migrate(db);
    run(db);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Inserts a deployment row whose `spec` column holds `spec` as JSON. `db` may be a handle or a database path. */
export function insertDeployment(db: Db | string, namespace: string, name: string, status: string, spec: unknown): void {
  const handle = typeof db === 'string' ? openDatabase(db) : db;
  try {
    const now = new Date().toISOString();
    handle
      .prepare(
        `INSERT INTO deployments (id, namespace, name, kind, runtime, status, spec, created_at, updated_at)
         VALUES (?, ?, ?, 'worker', 'docker', ?, ?, ?, ?)`,
      )
      .run(randomUUID(), namespace, name, status, JSON.stringify(spec), now, now);
  } finally {
    if (typeof db === 'string') handle.close();
  }
}
