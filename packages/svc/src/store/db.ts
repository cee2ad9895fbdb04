// The SQLite file: opened once per process, WAL journal (readers never block the writer, and a killed process
// leaves a consistent file), migrations applied in order and recorded so each runs exactly once.
import Database from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations/index.js';

export type Db = Database.Database;

export function openDatabase(path: string): Db {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  // NORMAL in WAL mode is durable across process crashes (kill -9); only an OS crash can lose the last commits.
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  return db;
}

/** Applies every migration not yet recorded, each in its own transaction. Returns the ids applied now. */
export function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS): string[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
  const applied = new Set(db.prepare('SELECT id FROM schema_migrations').pluck().all() as string[]);
  const ran: string[] = [];
  for (const migration of [...migrations].sort((a, b) => a.id.localeCompare(b.id))) {
    if (applied.has(migration.id)) continue;
    db.transaction(() => {
      db.exec(migration.up);
      db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)').run(migration.id, new Date().toISOString());
    })();
    ran.push(migration.id);
  }
  return ran;
}
