// The delivery queue on a real SQLite file: claims lease and count attempts, settlement is per subscriber,
// foreign leases are reclaimed, revocation drops pending deliveries, retention prunes delivered ones only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { createWebhook, revokeWebhook } from '../../src/store/webhooks.js';
import { countDeliveriesByStatus, enqueueEvent } from '../../src/store/outbox.js';
import { webhookEvent } from '../../src/domain/events.js';
import { claimDue as claimDueFull, nextDueAt, pruneDelivered, reclaimForeignLeases, redeliver, redeliverAllDead, settleDeliveries, listDeliveries } from '../../src/webhooks/queue.js';
import { withTempDb } from './resources-support.js';

const box = createSecretBox(randomBytes(32));
const t0 = new Date('2026-03-01T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const source = { id: 'd-1', namespace: 'prod', name: 'web', kind: 'worker' as const };
/** Claims with no webhook in flight and no per-webhook bound, unless `inFlight` says otherwise. */
const claimDue = (db: Parameters<typeof claimDueFull>[0], self: string, now: Date, until: Date, limit: number, inFlight: ReadonlyMap<string, number> = new Map(), perWebhook = 1000) =>
  claimDueFull(db, self, now, until, limit, inFlight, perWebhook).claimed;
const event = () => webhookEvent('deployment.scaled', source, { direction: 'up', instance_count: 2, replicas: 2 });

test('claim leases and counts an attempt; a leased delivery is not claimed again until the lease expires', () => {
  withTempDb((db) => {
    const hook = createWebhook(db, box, { url: 'http://10.0.0.1/a', events: [] }, t0).record;
    const { eventId } = enqueueEvent(db, event(), t0);
    const first = claimDue(db, 'w1', at(0), at(15_000), 10);
    assert.equal(first.length, 1);
    assert.deepEqual({ ...first[0], payload: JSON.parse(first[0]?.payload ?? '{}') }, {
      eventId,
      webhookId: hook.id,
      kind: 'deployment.scaled',
      payload: { schema_version: 1, deployment_id: 'd-1', namespace: 'prod', name: 'web', kind: 'worker', direction: 'up', instance_count: 2, replicas: 2 },
      url: 'http://10.0.0.1/a',
      attempts: 1,
    });
    assert.equal(claimDue(db, 'w1', at(1000), at(16_000), 10).length, 0, 'leased');
    assert.equal(nextDueAt(db), at(15_000).toISOString(), 'the lease expiry is the next due time');
    const again = claimDue(db, 'w1', at(15_000), at(30_000), 10);
    assert.equal(again[0]?.attempts, 2, 'an expired lease is claimable, and the lost attempt counted');
    assert.equal(claimDue(db, 'w1', at(40_000), at(50_000), 10, new Map([[hook.id, 2]]), 2).length, 0, 'saturated webhooks are skipped');
  });
});

test('claims respect the per-webhook bound and say when rows were left for a webhook at its bound', () => {
  withTempDb((db) => {
    const busy = createWebhook(db, box, { url: 'http://10.0.0.1/busy', events: ['deployment.status_changed'] }, t0).record;
    const other = createWebhook(db, box, { url: 'http://10.0.0.1/other', events: ['deployment.scaled'] }, t0).record;
    for (let i = 0; i < 5; i++) enqueueEvent(db, webhookEvent('deployment.status_changed', source, { old_status: 'creating', new_status: 'running', restart_count: 0 }), t0);
    enqueueEvent(db, event(), at(1));
    const first = claimDueFull(db, 'w1', at(10), at(15_000), 4, new Map([[busy.id, 1]]), 2);
    assert.equal(first.capped, true);
    assert.deepEqual(first.claimed.map((d) => d.webhookId), [busy.id], 'one slot was left for the busy webhook');
    const second = claimDueFull(db, 'w1', at(10), at(15_000), 20, new Map([[busy.id, 2]]), 2);
    assert.deepEqual(second.claimed.map((d) => d.webhookId), [other.id], 'a saturated webhook is skipped in SQL, the one behind it is not');
    assert.equal(second.capped, false);
  });
});

test('settlement is per subscriber: a delivered subscriber is never claimed again while another retries', () => {
  withTempDb((db) => {
    const ok = createWebhook(db, box, { url: 'http://10.0.0.1/ok', events: [] }, t0).record;
    const failing = createWebhook(db, box, { url: 'http://10.0.0.1/fail', events: [] }, t0).record;
    const { eventId } = enqueueEvent(db, event(), t0);
    const claimed = claimDue(db, 'w1', t0, at(15_000), 10);
    assert.equal(claimed.length, 2);
    settleDeliveries(db, 'w1', [
      { eventId, webhookId: ok.id, settlement: { status: 'delivered', at: at(10).toISOString() } },
      { eventId, webhookId: failing.id, settlement: { status: 'pending', nextAttemptAt: at(1000).toISOString(), lastError: 'HTTP 500', countsAsAttempt: true } },
    ]);
    assert.deepEqual(countDeliveriesByStatus(db), { pending: 1, delivered: 1, dead: 0 });
    const retried = claimDue(db, 'w1', at(1000), at(16_000), 10);
    assert.deepEqual(retried.map((d) => d.webhookId), [failing.id]);
    settleDeliveries(db, 'w1', [{ eventId, webhookId: failing.id, settlement: { status: 'dead', at: at(1100).toISOString(), lastError: 'HTTP 500' } }]);
    assert.deepEqual(countDeliveriesByStatus(db), { pending: 0, delivered: 1, dead: 1 });
    const dead = listDeliveries(db, failing.id, 'dead', 10);
    assert.equal(dead[0]?.attempts, 2);
    assert.equal(dead[0]?.lastError, 'HTTP 500');
    assert.equal(claimDue(db, 'w1', at(999_999), at(999_999), 10).length, 0, 'nothing is due');

    // Redelivery puts only the dead letter back, as new.
    assert.equal(redeliver(db, failing.id, eventId, at(2000)), true);
    assert.equal(redeliver(db, failing.id, eventId, at(2000)), false, 'already pending');
    const again = claimDue(db, 'w1', at(2000), at(17_000), 10);
    assert.deepEqual(again.map((d) => [d.webhookId, d.attempts]), [[failing.id, 1]]);
  });
});

test('an interrupted attempt does not count; results for a lease held by someone else are ignored', () => {
  withTempDb((db) => {
    const hook = createWebhook(db, box, { url: 'http://10.0.0.1/a', events: [] }, t0).record;
    const { eventId } = enqueueEvent(db, event(), t0);
    claimDue(db, 'w1', t0, at(15_000), 10);
    settleDeliveries(db, 'w2', [{ eventId, webhookId: hook.id, settlement: { status: 'delivered', at: t0.toISOString() } }]);
    assert.deepEqual(countDeliveriesByStatus(db), { pending: 1, delivered: 0, dead: 0 }, 'w2 holds no lease');
    settleDeliveries(db, 'w1', [{ eventId, webhookId: hook.id, settlement: { status: 'pending', nextAttemptAt: t0.toISOString(), lastError: null, countsAsAttempt: false } }]);
    assert.equal(claimDue(db, 'w1', t0, at(15_000), 10)[0]?.attempts, 1);
  });
});

test('a restart reclaims leases of the previous process at once', () => {
  withTempDb((db) => {
    createWebhook(db, box, { url: 'http://10.0.0.1/a', events: [] }, t0);
    for (let i = 0; i < 5; i++) enqueueEvent(db, event(), t0);
    assert.equal(claimDue(db, 'old-process', t0, at(60_000), 3).length, 3);
    assert.equal(claimDue(db, 'new-process', at(1), at(60_000), 10).length, 2, 'leased ones are not yet due');
    assert.equal(reclaimForeignLeases(db, 'new-process', at(2)), 3, 'only the other process’s leases');
    assert.equal(claimDue(db, 'new-process', at(2), at(60_000), 10).length, 3);
  });
});

test('revoking a webhook drops its pending deliveries (not its dead letters, not other webhooks)', () => {
  withTempDb((db) => {
    const revoked = createWebhook(db, box, { url: 'http://10.0.0.1/r', events: [] }, t0).record;
    const kept = createWebhook(db, box, { url: 'http://10.0.0.1/k', events: [] }, t0).record;
    const dead = enqueueEvent(db, event(), t0).eventId;
    claimDue(db, 'w1', t0, at(1000), 10);
    settleDeliveries(db, 'w1', [{ eventId: dead, webhookId: revoked.id, settlement: { status: 'dead', at: t0.toISOString(), lastError: 'x' } }]);
    for (let i = 0; i < 3; i++) enqueueEvent(db, event(), t0);
    assert.ok(revokeWebhook(db, revoked.id, at(5)));
    assert.equal(listDeliveries(db, revoked.id, 'pending', 10).length, 0);
    assert.equal(listDeliveries(db, revoked.id, 'dead', 10).length, 1, 'dead letters are kept');
    assert.equal(listDeliveries(db, kept.id, 'pending', 10).length, 4);
    assert.equal(redeliverAllDead(db, kept.id, at(6)), 0);
  });
});

test('retention: delivered deliveries and their events go after the cutoff; dead letters and pending stay', () => {
  withTempDb((db) => {
    const hook = createWebhook(db, box, { url: 'http://10.0.0.1/a', events: [] }, t0).record;
    const delivered = enqueueEvent(db, event(), t0).eventId;
    const deadEvent = enqueueEvent(db, event(), t0).eventId;
    const pending = enqueueEvent(db, event(), at(500)).eventId;
    const unmatched = enqueueEvent(db, event(), t0).eventId;
    db.prepare('DELETE FROM event_deliveries WHERE event_id = ?').run(unmatched);
    claimDue(db, 'w1', t0, at(1000), 2);
    settleDeliveries(db, 'w1', [
      { eventId: delivered, webhookId: hook.id, settlement: { status: 'delivered', at: at(100).toISOString() } },
      { eventId: deadEvent, webhookId: hook.id, settlement: { status: 'dead', at: at(100).toISOString(), lastError: 'x' } },
    ]);
    assert.deepEqual(pruneDelivered(db, at(50), 100), { deliveries: 0, events: 1 }, 'only the event nobody subscribed to is old enough');
    assert.deepEqual(pruneDelivered(db, at(200), 100), { deliveries: 1, events: 1 });
    const left = (db.prepare('SELECT id FROM events ORDER BY id').pluck().all() as string[]).sort();
    assert.deepEqual(left, [deadEvent, pending].sort());
    assert.deepEqual(countDeliveriesByStatus(db), { pending: 1, delivered: 0, dead: 1 });
  });
});
