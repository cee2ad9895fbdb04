import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { createWebhook, revokeWebhook, webhookSigningSecret } from '../../src/store/webhooks.js';
import { countDeliveriesByStatus, enqueueEvent } from '../../src/store/outbox.js';
import { webhookEvent, type WebhookEvent } from '../../src/domain/events.js';
import { withTempDb } from './resources-support.js';

const box = createSecretBox(randomBytes(32));
const now = new Date('2026-01-02T03:04:05.000Z');

const web = { id: 'd-1', namespace: 'prod', name: 'web', kind: 'worker' as const };

function statusChanged(): WebhookEvent {
  return webhookEvent('deployment.status_changed', web, { old_status: 'creating', new_status: 'running', restart_count: 0 });
}

function scaled(): WebhookEvent {
  return webhookEvent('deployment.scaled', { ...web, id: 'd-2', name: 'api' }, { direction: 'up', instance_count: 2, replicas: 3 });
}

test('enqueue: one pending delivery per matching, non-revoked webhook; payload stored as given', () => {
  withTempDb((db) => {
    const all = createWebhook(db, box, { url: 'http://10.0.0.1/all', events: [] }, now).record;
    const star = createWebhook(db, box, { url: 'http://10.0.0.1/star', events: ['*'] }, now).record;
    const family = createWebhook(db, box, { url: 'http://10.0.0.1/family', events: ['deployment.*'] }, now).record;
    const exact = createWebhook(db, box, { url: 'http://10.0.0.1/exact', events: ['deployment.status_changed'] }, now).record;
    const other = createWebhook(db, box, { url: 'http://10.0.0.1/other', events: ['deployment.error', 'deployment.scaled'] }, now).record;
    const revoked = createWebhook(db, box, { url: 'http://10.0.0.1/revoked', events: [] }, now).record;
    assert.ok(revokeWebhook(db, revoked.id, now));

    const first = enqueueEvent(db, statusChanged(), now);
    assert.deepEqual(new Set(first.webhookIds), new Set([all.id, star.id, family.id, exact.id]));
    const second = enqueueEvent(db, scaled(), now);
    assert.deepEqual(new Set(second.webhookIds), new Set([all.id, star.id, family.id, other.id]));

    const event = db.prepare('SELECT kind, deployment_id, payload, created_at FROM events WHERE id = ?').get(first.eventId) as {
      kind: string;
      deployment_id: string;
      payload: string;
      created_at: string;
    };
    assert.equal(event.kind, 'deployment.status_changed');
    assert.equal(event.deployment_id, 'd-1');
    assert.equal(event.created_at, now.toISOString());
    assert.deepEqual(JSON.parse(event.payload), {
      schema_version: 1,
      deployment_id: 'd-1',
      namespace: 'prod',
      name: 'web',
      kind: 'worker',
      old_status: 'creating',
      new_status: 'running',
      restart_count: 0,
    });

    const deliveries = db
      .prepare('SELECT webhook_id, status, attempts, next_attempt_at, last_error, delivered_at FROM event_deliveries WHERE event_id = ?')
      .all(first.eventId) as Array<Record<string, unknown>>;
    assert.equal(deliveries.length, 4);
    for (const delivery of deliveries) {
      assert.equal(delivery.status, 'pending');
      assert.equal(delivery.attempts, 0);
      assert.equal(delivery.next_attempt_at, now.toISOString());
      assert.equal(delivery.last_error, null);
      assert.equal(delivery.delivered_at, null);
    }
    assert.deepEqual(countDeliveriesByStatus(db), { pending: 8, delivered: 0, dead: 0 });
  });
});

test('enqueue with no webhooks still records the event', () => {
  withTempDb((db) => {
    const { eventId, webhookIds } = enqueueEvent(db, scaled(), now);
    assert.deepEqual(webhookIds, []);
    assert.equal((db.prepare('SELECT count(*) AS n FROM events WHERE id = ?').get(eventId) as { n: number }).n, 1);
  });
});

test('enqueue joins the caller transaction: a rollback leaves neither event nor deliveries', () => {
  withTempDb((db) => {
    createWebhook(db, box, { url: 'http://10.0.0.1/all', events: [] }, now);
    assert.throws(
      () =>
        db.transaction(() => {
          enqueueEvent(db, statusChanged(), now);
          throw new Error('status change failed after the enqueue');
        })(),
      /status change failed/,
    );
    assert.equal((db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n, 0);
    assert.equal((db.prepare('SELECT count(*) AS n FROM event_deliveries').get() as { n: number }).n, 0);
  });
});

test('the pending queue is served by the queue index, without a sort', () => {
  withTempDb((db) => {
    const plan = db
      .prepare("EXPLAIN QUERY PLAN SELECT event_id FROM event_deliveries WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at")
      .all(now.toISOString()) as Array<{ detail: string }>;
    assert.ok(plan.some((row) => row.detail.includes('event_deliveries_queue')), JSON.stringify(plan));
    assert.ok(!plan.some((row) => row.detail.includes('TEMP B-TREE')), 'no sort step');
  });
});

test('webhook signing secret is sealed at rest and recoverable for delivery', () => {
  withTempDb((db) => {
    const { record, secret } = createWebhook(db, box, { url: 'http://10.0.0.1/', events: [] }, now);
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    const stored = db.prepare('SELECT sealed_secret FROM webhooks WHERE id = ?').get(record.id) as { sealed_secret: Buffer };
    assert.ok(!stored.sealed_secret.includes(Buffer.from(secret)));
    assert.equal(webhookSigningSecret(db, box, record.id), secret);
    assert.equal(webhookSigningSecret(db, box, 'unknown'), null);
    const given = createWebhook(db, box, { url: 'http://10.0.0.1/', events: [], secret: 's' }, now);
    assert.equal(given.secret, 's');
    assert.equal(webhookSigningSecret(db, box, given.record.id), 's');
  });
});

test('enqueue costs well under 1 ms per event with 20 webhooks (median; p99 printed)', () => {
  withTempDb((db) => {
    for (let i = 0; i < 20; i++) createWebhook(db, box, { url: `http://10.0.0.${i + 1}/`, events: i % 2 ? ['deployment.*'] : ['deployment.error'] }, now);
    // Measured inside the caller's transaction, as on the status-change path: the commit belongs to the
    // status change and is paid with or without the event.
    const samples: number[] = [];
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) {
        const start = process.hrtime.bigint();
        enqueueEvent(db, statusChanged(), now);
        samples.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
    })();
    samples.sort((a, b) => a - b);
    const p99 = samples[Math.floor(samples.length * 0.99)] ?? Infinity;
    const p50 = samples[Math.floor(samples.length * 0.5)] ?? Infinity;
    console.log(`enqueue p50 ${p50.toFixed(3)} ms, p99 ${p99.toFixed(3)} ms (20 webhooks, 10 matching)`);
    // The median is asserted: on a shared 2-core machine a p99 measures the neighbours' load as much as
    // this code. The delivery bench measures the p99 on a quiet machine.
    assert.ok(p50 < 1, `p50 ${p50} ms`);
  });
});
