// secrets table. The value is sealed with AES-256-GCM (crypto/secret-box.ts) bound to the secret's id as
// associated data, so a ciphertext moved onto another row does not decrypt. The value never leaves this
// module except through decryptSecretValue, which the deployment runtime uses to resolve `secretRef`.
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../crypto/secret-box.js';
import type { SecretInput } from '../domain/secret.js';
import type { Db } from './db.js';
import { namespaceExists } from './namespaces.js';
import type { CreateOutcome, DeleteOutcome } from './outcomes.js';
import { isUniqueViolation, jsonList, prepared } from './prepared.js';
import { deleteUnlessReferenced } from './referrers.js';

export interface SecretMetadata {
  id: string;
  created_at: string;
  updated_at: string | null;
  namespace: string;
  name: string;
}

const COLUMNS = 'id, created_at, updated_at, namespace, name';

/** Validate `input` first (domain/secret.ts). The namespace must exist: secrets never create one. */
export function createSecret(db: Db, box: SecretBox, input: SecretInput, now: Date): CreateOutcome<SecretMetadata> {
  return db.transaction((): CreateOutcome<SecretMetadata> => {
    if (!namespaceExists(db, input.namespace)) return { kind: 'namespace_missing' };
    const record: SecretMetadata = {
      id: randomUUID(),
      created_at: now.toISOString(),
      updated_at: null,
      namespace: input.namespace,
      name: input.name,
    };
    const sealed = box.seal(Buffer.from(input.value, 'utf8'), record.id);
    try {
      prepared(db, 'INSERT INTO secrets (id, namespace, name, sealed_value, created_at) VALUES (?, ?, ?, ?, ?)').run(
        record.id,
        record.namespace,
        record.name,
        sealed,
        record.created_at,
      );
    } catch (error) {
      if (isUniqueViolation(error)) return { kind: 'duplicate' };
      throw error;
    }
    return { kind: 'created', record };
  })();
}

/** `namespaces` null = every namespace. Ordered by namespace, then name. */
export function listSecrets(db: Db, namespaces: readonly string[] | null): SecretMetadata[] {
  if (namespaces === null) {
    return prepared<[], SecretMetadata>(db, `SELECT ${COLUMNS} FROM secrets ORDER BY namespace, name`).all();
  }
  return prepared<[string], SecretMetadata>(
    db,
    `SELECT ${COLUMNS} FROM secrets WHERE namespace IN (SELECT value FROM json_each(?)) ORDER BY namespace, name`,
  ).all(jsonList(namespaces));
}

export function getSecret(db: Db, id: string): SecretMetadata | null {
  return prepared<[string], SecretMetadata>(db, `SELECT ${COLUMNS} FROM secrets WHERE id = ?`).get(id) ?? null;
}

/** Refuses while active deployments reference the secret, unless `force`. */
export function deleteSecret(db: Db, id: string, force: boolean): DeleteOutcome {
  return deleteUnlessReferenced(db, 'secret', id, force);
}

/**
 * The clear value of secret `name` in `namespace`, or null when no such secret exists (the deployment then
 * fails with an error event). Throws when the value cannot be decrypted (wrong SVC_SECRET_KEY or tampering).
 */
export function decryptSecretValue(db: Db, box: SecretBox, namespace: string, name: string): string | null {
  const row = prepared<[string, string], { id: string; sealed_value: Buffer }>(
    db,
    'SELECT id, sealed_value FROM secrets WHERE namespace = ? AND name = ?',
  ).get(namespace, name);
  if (!row) return null;
  return box.open(row.sealed_value, row.id).toString('utf8');
}
