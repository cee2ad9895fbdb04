// configs table: named blobs, mounted into instances by `type: config` volume mounts (readConfigKey).
import { randomUUID } from 'node:crypto';
import { selectConfigKey, type ConfigCreateInput, type ConfigReplaceInput } from '../domain/config.js';
import type { Db } from './db.js';
import { namespaceExists } from './namespaces.js';
import type { CreateOutcome } from './outcomes.js';
import { isUniqueViolation, jsonList, prepared } from './prepared.js';

export interface ConfigRecord {
  id: string;
  name: string;
  namespace: string;
  data: string;
  labels: string;
  created_at: string;
  updated_at: string | null;
}

const COLUMNS = 'id, name, namespace, data, labels, created_at, updated_at';

/** Validate `input` first (domain/config.ts). The namespace must exist, as for secrets and volumes. */
export function createConfig(db: Db, input: ConfigCreateInput, now: Date): CreateOutcome<ConfigRecord> {
  return db.transaction((): CreateOutcome<ConfigRecord> => {
    if (!namespaceExists(db, input.namespace)) return { kind: 'namespace_missing' };
    const record: ConfigRecord = {
      id: randomUUID(),
      name: input.name,
      namespace: input.namespace,
      data: input.data,
      labels: input.labels,
      created_at: now.toISOString(),
      updated_at: null,
    };
    try {
      prepared(db, 'INSERT INTO configs (id, namespace, name, data, labels, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
        record.id,
        record.namespace,
        record.name,
        record.data,
        record.labels,
        record.created_at,
      );
    } catch (error) {
      if (isUniqueViolation(error)) return { kind: 'duplicate' };
      throw error;
    }
    return { kind: 'created', record };
  })();
}

export function listConfigs(db: Db, namespaces: readonly string[] | null): ConfigRecord[] {
  if (namespaces === null) return prepared<[], ConfigRecord>(db, `SELECT ${COLUMNS} FROM configs ORDER BY namespace, name`).all();
  return prepared<[string], ConfigRecord>(
    db,
    `SELECT ${COLUMNS} FROM configs WHERE namespace IN (SELECT value FROM json_each(?)) ORDER BY namespace, name`,
  ).all(jsonList(namespaces));
}

export function getConfig(db: Db, id: string): ConfigRecord | null {
  return prepared<[string], ConfigRecord>(db, `SELECT ${COLUMNS} FROM configs WHERE id = ?`).get(id) ?? null;
}

export type ReplaceOutcome = { kind: 'replaced'; record: ConfigRecord } | { kind: 'not_found' } | { kind: 'duplicate' };

/** Full replacement of name, data and labels; the namespace never changes. */
export function replaceConfig(db: Db, id: string, input: ConfigReplaceInput, now: Date): ReplaceOutcome {
  return db.transaction((): ReplaceOutcome => {
    const current = getConfig(db, id);
    if (!current) return { kind: 'not_found' };
    const updatedAt = now.toISOString();
    try {
      prepared(db, 'UPDATE configs SET name = ?, data = ?, labels = ?, updated_at = ? WHERE id = ?').run(
        input.name,
        input.data,
        input.labels,
        updatedAt,
        id,
      );
    } catch (error) {
      if (isUniqueViolation(error)) return { kind: 'duplicate' };
      throw error;
    }
    return { kind: 'replaced', record: { ...current, ...input, updated_at: updatedAt } };
  })();
}

export function deleteConfig(db: Db, id: string): boolean {
  return prepared(db, 'DELETE FROM configs WHERE id = ?').run(id).changes > 0;
}

export type ConfigKeyResult =
  | { kind: 'found'; value: string }
  | { kind: 'missing_config' }
  | { kind: 'missing_key' }
  /** The config's data is not a JSON object, so it has no keys. */
  | { kind: 'not_an_object' };

/**
 * The content of entry `key` of config `name` in `namespace`, for a `type: config` mount. Every outcome but
 * `found` means the deployment goes to `config_error`; the kinds say which message to give.
 */
export function readConfigKey(db: Db, namespace: string, name: string, key: string): ConfigKeyResult {
  const row = prepared<[string, string], { data: string }>(db, 'SELECT data FROM configs WHERE namespace = ? AND name = ?').get(
    namespace,
    name,
  );
  if (!row) return { kind: 'missing_config' };
  return selectConfigKey(row.data, key);
}
