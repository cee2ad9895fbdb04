// The deployments repository on a real, migrated SQLite file: records, filters, rolling-update parents, the
// status change + outbox event in one transaction, events and health-check results.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import {
  appendEvent,
  appendHealthResult,
  applyDeployment,
  createDeployment,
  findActiveByName,
  getDeployment,
  listChildren,
  rolloutFamily,
  listDeployments,
  listEvents,
  listHealthResults,
  markDeleted,
  purgeDeployment,
  recentHealthResults,
  saveSchedulerState,
  schedulerStateOf,
  setImageDigest,
  toDeploymentResource,
  trimHealthResults,
  updateStatus,
} from '../../src/store/deployments.js';
import { namespaceExists } from '../../src/store/namespaces.js';
import type { Db } from '../../src/store/db.js';
import type { ObservedInstance } from '../../src/runtime/runtime.js';
import { spec } from '../unit/plan-fixtures.js';
import { withTempDb } from './resources-support.js';

const t0 = new Date('2026-01-02T03:04:05.000Z');
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);

function outbox(db: Db): { kind: string; payload: Record<string, unknown> }[] {
  return (db.prepare('SELECT kind, payload FROM events ORDER BY created_at, rowid').all() as { kind: string; payload: string }[]).map(
    (row) => ({ kind: row.kind, payload: JSON.parse(row.payload) as Record<string, unknown> }),
  );
}

test('create: pending record with the spec, namespace ensured, scheduler state initialised', () => {
  withTempDb((db) => {
    assert.equal(namespaceExists(db, 'd2t-a'), false);
    const record = createDeployment(db, { spec: spec({ namespace: 'd2t-a', name: 'web' }), parentId: null, force: false }, t0);
    assert.equal(record.status, 'pending');
    assert.equal(record.restart_count, 0);
    assert.equal(record.parent_id, null);
    assert.equal(record.created_at, t0.toISOString());
    assert.equal(record.status_since, t0.getTime());
    assert.equal(record.backoff_until, null);
    assert.equal(record.force, false);
    assert.equal(record.spec.namespace, 'd2t-a');
    assert.ok(namespaceExists(db, 'd2t-a'));
    assert.deepEqual(getDeployment(db, record.id), record);
    assert.equal(getDeployment(db, 'nope'), null);
    assert.deepEqual(schedulerStateOf(record), { status: 'pending', restartCount: 0, retryCount: 0, statusSince: t0.getTime(), backoffUntil: null });
  });
});

test('apply: a second apply of the same name is a child of the newest non-deleted one; other names are not', () => {
  withTempDb((db) => {
    const first = applyDeployment(db, spec({ namespace: 'ns1', name: 'web' }), false, at(0));
    const other = applyDeployment(db, spec({ namespace: 'ns2', name: 'web' }), false, at(1));
    assert.equal(other.parent_id, null);
    const second = applyDeployment(db, spec({ namespace: 'ns1', name: 'web', image: 'img:2' }), true, at(2));
    assert.equal(second.parent_id, first.id);
    assert.equal(second.force, true);
    assert.equal(findActiveByName(db, 'ns1', 'web')?.id, second.id);
    markDeleted(db, second.id, at(3));
    assert.equal(findActiveByName(db, 'ns1', 'web')?.id, first.id);
    markDeleted(db, first.id, at(4));
    assert.equal(findActiveByName(db, 'ns1', 'web'), null);
    const third = applyDeployment(db, spec({ namespace: 'ns1', name: 'web' }), false, at(5));
    assert.equal(third.parent_id, null);
  });
});

test('list: namespace, status and kind filters combine; visible namespaces restrict; oldest first', () => {
  withTempDb((db) => {
    const a = createDeployment(db, { spec: spec({ namespace: 'ns1', name: 'a' }), parentId: null, force: false }, at(0));
    const b = createDeployment(db, { spec: spec({ namespace: 'ns2', name: 'b', kind: 'job' }), parentId: null, force: false }, at(1));
    const c = createDeployment(db, { spec: spec({ namespace: 'ns3', name: 'c' }), parentId: null, force: false }, at(2));
    updateStatus(db, c.id, 'running', {}, at(3));
    const ids = (records: { id: string }[]) => records.map((r) => r.id);
    assert.deepEqual(ids(listDeployments(db)), [a.id, b.id, c.id]);
    assert.deepEqual(ids(listDeployments(db, { namespaces: ['ns1', 'ns3'] })), [a.id, c.id]);
    assert.deepEqual(ids(listDeployments(db, { statuses: ['running'] })), [c.id]);
    assert.deepEqual(ids(listDeployments(db, { statuses: ['pending', 'running'] })), [a.id, b.id, c.id]);
    assert.deepEqual(ids(listDeployments(db, { kinds: ['job'] })), [b.id]);
    assert.deepEqual(ids(listDeployments(db, { kinds: ['worker'], statuses: ['pending'] })), [a.id]);
    assert.deepEqual(ids(listDeployments(db, { visible: ['ns2'] })), [b.id]);
    assert.deepEqual(ids(listDeployments(db, { visible: ['ns2'], namespaces: ['ns1'] })), []);
    assert.deepEqual(ids(listDeployments(db, { visible: [] })), []);
    assert.deepEqual(ids(listDeployments(db, { namespaces: [], statuses: [], kinds: [] })), [a.id, b.id, c.id]);
  });
});

test('updateStatus: row and deployment.status_changed commit together; no event without a change', () => {
  withTempDb((db) => {
    const d = createDeployment(db, { spec: spec({ namespace: 'ns1', name: 'web' }), parentId: null, force: false }, t0);
    const moved = updateStatus(db, d.id, 'creating', { restartCount: 2 }, at(5));
    assert.equal(moved?.status, 'creating');
    assert.equal(moved?.restart_count, 2);
    assert.equal(moved?.status_since, at(5).getTime());
    assert.equal(moved?.updated_at, at(5).toISOString());
    assert.deepEqual(outbox(db), [
      {
        kind: 'deployment.status_changed',
        payload: {
          schema_version: 1,
          deployment_id: d.id,
          namespace: 'ns1',
          name: 'web',
          kind: 'worker',
          old_status: 'pending',
          new_status: 'creating',
          restart_count: 2,
        },
      },
    ]);
    updateStatus(db, d.id, 'creating', { retryCount: 1 }, at(6));
    assert.equal(outbox(db).length, 1);
    assert.equal(getDeployment(db, d.id)?.status_since, at(5).getTime(), 'no status change keeps status_since');
    assert.equal(updateStatus(db, 'missing', 'running'), null);

    // A failing enqueue (the events table is gone) rolls the status change back with it.
    db.exec('ALTER TABLE events RENAME TO events_away');
    assert.throws(() => updateStatus(db, d.id, 'running', {}, at(7)));
    db.exec('ALTER TABLE events_away RENAME TO events');
    assert.equal(getDeployment(db, d.id)?.status, 'creating');

    const deleted = markDeleted(db, d.id, at(8));
    assert.equal(deleted?.status, 'deleted');
    assert.deepEqual(outbox(db).map((e) => e.payload.new_status), ['creating', 'deleted']);
  });
});

test('saveSchedulerState writes the whole state and enqueues nothing', () => {
  withTempDb((db) => {
    const d = createDeployment(db, { spec: spec(), parentId: null, force: false }, t0);
    const state = { status: 'image_pull_back_off' as const, restartCount: 1, retryCount: 3, statusSince: 123, backoffUntil: 456 };
    assert.equal(saveSchedulerState(db, d.id, state, at(1)), true);
    assert.deepEqual(schedulerStateOf(getDeployment(db, d.id)!), state);
    assert.equal(outbox(db).length, 0);
    assert.equal(saveSchedulerState(db, 'missing', state), false);
  });
});

test('image digest: only sha256:<64 hex> is stored', () => {
  withTempDb((db) => {
    const d = createDeployment(db, { spec: spec(), parentId: null, force: false }, t0);
    assert.equal(setImageDigest(db, d.id, 'latest'), false);
    const digest = `sha256:${'ab'.repeat(32)}`;
    assert.equal(setImageDigest(db, d.id, digest), true);
    assert.equal(setImageDigest(db, d.id, digest), false, 'unchanged digest writes nothing');
    assert.equal(getDeployment(db, d.id)?.image_digest, digest);
  });
});

test('resource shape: instances from observation (live only, address when known), registry password dropped', () => {
  withTempDb((db) => {
    const d = createDeployment(
      db,
      {
        spec: spec({ config: { image_pull_policy: 'Always', registry_auth: { username: 'u', password: 'hunter2-secret' } } }),
        parentId: null,
        force: false,
        secretBox: createSecretBox(randomBytes(32)),
      },
      t0,
    );
    const base: ObservedInstance = {
      id: 'c1',
      name: 'prod_web_00000001',
      deploymentId: d.id,
      specHash: 'h',
      state: 'running',
      exitCode: null,
      startedAt: null,
      finishedAt: null,
      address: '172.18.0.2',
      imageDigest: null,
    };
    const resource = toDeploymentResource(getDeployment(db, d.id)!, [
      base,
      { ...base, id: 'c2', address: null },
      { ...base, id: 'c3', state: 'exited' },
    ]);
    assert.deepEqual(resource.instances, [{ id: 'c1', address: '172.18.0.2' }, { id: 'c2' }]);
    assert.deepEqual(resource.config, { image_pull_policy: 'Always', registry_auth: { username: 'u' } });
    assert.ok(!JSON.stringify(resource).includes('hunter2-secret'));
    assert.equal(resource.parent_id, null);
    assert.equal('image_digest' in resource, false);
    assert.equal(resource.status, 'pending');
  });
});

test('events: newest first, default limit 50, level filter, purged with the deployment', () => {
  withTempDb((db) => {
    const d = createDeployment(db, { spec: spec(), parentId: null, force: false }, t0);
    for (let i = 0; i < 60; i += 1) {
      appendEvent(db, { deploymentId: d.id, level: i % 3 === 0 ? 'error' : 'info', component: 'scheduler', reason: 'ScaleUp', message: `m${i}` }, at(i));
    }
    const latest = listEvents(db, d.id);
    assert.equal(latest.length, 50);
    assert.equal(latest[0]?.message, 'm59');
    assert.equal(latest[49]?.message, 'm10');
    const errors = listEvents(db, d.id, { levels: ['error'], limit: 3 });
    assert.deepEqual(errors.map((e) => e.message), ['m57', 'm54', 'm51']);
    assert.ok(errors.every((e) => e.level === 'error' && e.deployment_id === d.id && e.component === 'scheduler'));
    assert.equal(listEvents(db, d.id, { levels: ['warning'] }).length, 0);
    assert.equal(listEvents(db, 'other').length, 0);
  });
});

test('health results: list newest first, latest per instance and check, recent per check, trim, purge', () => {
  withTempDb((db) => {
    const d = createDeployment(db, { spec: spec(), parentId: null, force: false }, t0);
    let second = 0;
    for (const instance of ['i1', 'i2']) {
      for (const checkIndex of [0, 1]) {
        for (const status of ['failure', 'success', 'timeout'] as const) {
          second += 1;
          appendHealthResult(
            db,
            {
              deployment_id: d.id,
              instance_id: instance,
              check_index: checkIndex,
              check_type: 'tcp',
              status,
              message: status === 'success' ? null : status,
              started_at: at(second).toISOString(),
              finished_at: at(second).toISOString(),
            },
            at(second),
          );
        }
      }
    }
    const all = listHealthResults(db, d.id, { limit: 100 });
    assert.equal(all.length, 12);
    assert.equal(all[0]?.created_at, at(12).toISOString());
    assert.equal(listHealthResults(db, d.id, { limit: 5 }).length, 5);
    const latest = listHealthResults(db, d.id, { latest: true });
    assert.equal(latest.length, 4);
    assert.ok(latest.every((r) => r.status === 'timeout'));
    assert.deepEqual(new Set(latest.map((r) => `${r.instance_id}/${r.check_index}`)), new Set(['i1/0', 'i1/1', 'i2/0', 'i2/1']));
    const recent = recentHealthResults(db, 2);
    assert.equal(recent.length, 8);
    assert.deepEqual(recent.slice(0, 2).map((r) => r.status), ['timeout', 'success']);
    assert.equal(trimHealthResults(db, 5), 7);
    assert.equal(listHealthResults(db, d.id, { limit: 100 }).length, 5);

    appendEvent(db, { deploymentId: d.id, level: 'info', component: 'scheduler', reason: 'Purged', message: 'x' });
    assert.equal(purgeDeployment(db, d.id), true);
    assert.equal(getDeployment(db, d.id), null);
    assert.equal(listEvents(db, d.id).length, 0);
    assert.equal(listHealthResults(db, d.id).length, 0);
    assert.equal(purgeDeployment(db, d.id), false);
  });
});

test('rollout family: the deployment, its children and its ancestors', () => {
  withTempDb((db) => {
    const a = applyDeployment(db, spec({ name: 'web' }), false, at(0));
    const b = applyDeployment(db, spec({ name: 'web' }), false, at(1));
    const c = applyDeployment(db, spec({ name: 'web' }), false, at(2));
    applyDeployment(db, spec({ name: 'other' }), false, at(3));
    assert.deepEqual(listChildren(db, a.id).map((d) => d.id), [b.id]);
    assert.deepEqual(new Set(rolloutFamily(db, b.id).map((d) => d.id)), new Set([a.id, b.id, c.id]));
    assert.deepEqual(new Set(rolloutFamily(db, c.id).map((d) => d.id)), new Set([a.id, b.id, c.id]));
    assert.deepEqual(rolloutFamily(db, a.id).map((d) => d.id), [a.id, b.id]);
    assert.deepEqual(rolloutFamily(db, 'missing'), []);
  });
});
