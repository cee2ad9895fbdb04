// volumes table: named storage entities. Created through the API (namespace must exist) or registered by a
// deployment that mounts a named volume (registerVolume: idempotent, ensures the namespace).
import { randomUUID } from 'node:crypto';
import { DEFAULT_BACKEND_TYPE, type BackendType } from '../domain/volume.js';
import type { Db } from './db.js';
import { ensureNamespace, namespaceExists } from './namespaces.js';
import type { CreateOutcome, DeleteOutcome } from './outcomes.js';
import { isUniqueViolation, jsonList, prepared } from './prepared.js';
import { deleteUnlessReferenced } from './referrers.js';

export interface VolumeRecord {
  id: string;
  created_at: string;
  updated_at: string | null;
  namespace: string;
  name: string;
  backend_type: BackendType;
  /** Byte hint, not a quota. */
  size: number | null;
  labels: Record<string, string>;
}

export interface NewVolume {
  namespace: string;
  name: string;
  backend_type: BackendType;
  size: number | null;
  labels: Readonly<Record<string, string>>;
}

interface VolumeRow extends Omit<VolumeRecord, 'labels'> {
  labels: string;
}

const COLUMNS = 'id, created_at, updated_at, namespace, name, backend_type, size, labels';

function toRecord(row: VolumeRow): VolumeRecord {
  return { ...row, labels: parseLabels(row.labels) };
}

/** Labels were validated on the way in; a row edited by hand still never yields a non-string value. */
function parseLabels(text: string): Record<string, string> {
  const parsed: unknown = JSON.parse(text);
  const labels: Record<string, string> = {};
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    for (const [key, value] of Object.entries(parsed)) if (typeof value === 'string') labels[key] = value;
  }
  return labels;
}

function insertVolume(db: Db, input: NewVolume, now: Date): VolumeRecord {
  const record: VolumeRecord = {
    id: randomUUID(),
    created_at: now.toISOString(),
    updated_at: null,
    namespace: input.namespace,
    name: input.name,
    backend_type: input.backend_type,
    size: input.size,
    labels: { ...input.labels },
  };
  prepared(
    db,
    'INSERT INTO volumes (id, namespace, name, backend_type, size, labels, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ).run(record.id, record.namespace, record.name, record.backend_type, record.size, JSON.stringify(record.labels), record.created_at);
  return record;
}

/** Validate `input` first (domain/volume.ts). The namespace must exist. */
export function createVolume(db: Db, input: NewVolume, now: Date): CreateOutcome<VolumeRecord> {
  return db.transaction((): CreateOutcome<VolumeRecord> => {
    if (!namespaceExists(db, input.namespace)) return { kind: 'namespace_missing' };
    try {
      return { kind: 'created', record: insertVolume(db, input, now) };
    } catch (error) {
      if (isUniqueViolation(error)) return { kind: 'duplicate' };
      throw error;
    }
  })();
}

export function listVolumes(db: Db, namespaces: readonly string[] | null): VolumeRecord[] {
  const rows =
    namespaces === null
      ? prepared<[], VolumeRow>(db, `SELECT ${COLUMNS} FROM volumes ORDER BY namespace, name`).all()
      : prepared<[string], VolumeRow>(
          db,
          `SELECT ${COLUMNS} FROM volumes WHERE namespace IN (SELECT value FROM json_each(?)) ORDER BY namespace, name`,
        ).all(jsonList(namespaces));
  return rows.map(toRecord);
}

export function getVolume(db: Db, id: string): VolumeRecord | null {
  const row = prepared<[string], VolumeRow>(db, `SELECT ${COLUMNS} FROM volumes WHERE id = ?`).get(id);
  return row ? toRecord(row) : null;
}

export function getVolumeByName(db: Db, namespace: string, name: string): VolumeRecord | null {
  const row = prepared<[string, string], VolumeRow>(db, `SELECT ${COLUMNS} FROM volumes WHERE namespace = ? AND name = ?`).get(
    namespace,
    name,
  );
  return row ? toRecord(row) : null;
}

/**
 * The volume `name` in `namespace`, registered when a deployment mounts it for the first time (spec: "A
 * deployment that mounts a named volume registers it automatically"). Idempotent: an existing volume is
 * returned unchanged, whatever `backendType` says. Ensures the namespace. Safe inside the caller's transaction.
 */
export function registerVolume(
  db: Db,
  namespace: string,
  name: string,
  backendType: BackendType = DEFAULT_BACKEND_TYPE,
  now: Date = new Date(),
): VolumeRecord {
  return db.transaction((): VolumeRecord => {
    const existing = getVolumeByName(db, namespace, name);
    if (existing) return existing;
    ensureNamespace(db, namespace, now);
    return insertVolume(db, { namespace, name, backend_type: backendType, size: null, labels: {} }, now);
  })();
}

/** Refuses while active deployments mount the volume, unless `force`. */
export function deleteVolume(db: Db, id: string, force: boolean): DeleteOutcome {
  return deleteUnlessReferenced(db, 'volume', id, force);
}
