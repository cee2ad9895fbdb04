// Which active deployments use a secret or a named volume. Read straight from `deployments.spec` with
// json_each, so a reference can never disagree with the deployment that holds it:
//   secret: spec.environment.<KEY> = {"secretRef": "<name>"}
//   volume: spec.volumes[] with type = 'volume' and source = '<name>'
// in the same namespace as the resource.
//
// Active = a deployment that may still start an instance and so still needs the resource; inactive are
// `deleted` and the terminal statuses (INACTIVE_STATUSES). The retried failure statuses stay active because the
// scheduler will try them again.
import { INACTIVE_STATUSES, type DeploymentStatus } from '../domain/deployment.js';
import type { Db } from './db.js';
import type { DeleteOutcome } from './outcomes.js';
import { jsonList, prepared } from './prepared.js';

export const INACTIVE_DEPLOYMENT_STATUSES: readonly DeploymentStatus[] = [...INACTIVE_STATUSES];

export interface ReferencedResource {
  kind: 'secret' | 'volume';
  namespace: string;
  name: string;
}

const SECRET_REFERRERS = `
  SELECT DISTINCT d.namespace || '/' || d.name AS referrer
  FROM deployments AS d, json_each(d.spec, '$.environment') AS env
  WHERE d.namespace = ?
    AND d.status NOT IN (SELECT value FROM json_each(?))
    AND env.type = 'object'
    AND json_extract(env.value, '$.secretRef') = ?
  ORDER BY referrer`;

const VOLUME_REFERRERS = `
  SELECT DISTINCT d.namespace || '/' || d.name AS referrer
  FROM deployments AS d, json_each(d.spec, '$.volumes') AS mount
  WHERE d.namespace = ?
    AND d.status NOT IN (SELECT value FROM json_each(?))
    AND mount.type = 'object'
    AND json_extract(mount.value, '$.type') = 'volume'
    AND json_extract(mount.value, '$.source') = ?
  ORDER BY referrer`;

/** `<namespace>/<name>` of every active deployment referencing the resource, sorted, without duplicates. */
export function findReferrers(db: Db, resource: ReferencedResource): string[] {
  const sql = resource.kind === 'secret' ? SECRET_REFERRERS : VOLUME_REFERRERS;
  return prepared<[string, string, string], { referrer: string }>(db, sql)
    .all(resource.namespace, jsonList(INACTIVE_DEPLOYMENT_STATUSES), resource.name)
    .map((row) => row.referrer);
}

const TABLES = { secret: 'secrets', volume: 'volumes' } as const;

/**
 * Deletes secret or volume `id` unless an active deployment references it (then `referenced` with the
 * referrers), or `force`. Check and delete are one transaction, so no reference can slip in between.
 */
export function deleteUnlessReferenced(db: Db, kind: ReferencedResource['kind'], id: string, force: boolean): DeleteOutcome {
  const table = TABLES[kind];
  return db.transaction((): DeleteOutcome => {
    const row = prepared<[string], { namespace: string; name: string }>(db, `SELECT namespace, name FROM ${table} WHERE id = ?`).get(id);
    if (!row) return { kind: 'not_found' };
    if (!force) {
      const deployments = findReferrers(db, { kind, namespace: row.namespace, name: row.name });
      if (deployments.length > 0) return { kind: 'referenced', deployments };
    }
    prepared(db, `DELETE FROM ${table} WHERE id = ?`).run(id);
    return { kind: 'deleted' };
  })();
}
