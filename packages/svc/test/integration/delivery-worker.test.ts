// The worker over a real SQLite file with a scripted sender (the HTTP adapter's interface): the in-flight bounds
// hold overall and per webhook, a slow webhook does not starve a fast one, and stop() cuts attempts without
// losing or charging them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { createWebhook } from '../../src/store/webhooks.js';
import { countDeliveriesByStatus, enqueueEvent } from '../../src/store/outbox.js';
import { startDeliveryWorker } from '../../src/webhooks/worker.js';
import { DEFAULT_DELIVERY_SETTINGS, type DeliverySettings } from '../../src/webhooks/settings.js';
import type { Sender } from '../../src/webhooks/sender.js';
import type { AttemptOutcome } from '../../src/webhooks/policy.js';
import { listDeliveries } from '../../src/webhooks/queue.js';
import { statusChanged } from './delivery-support.js';

const box = createSecretBox(randomBytes(32));
const settings: DeliverySettings = { ...DEFAULT_DELIVERY_SETTINGS, concurrency: 8, perWebhookConcurrency: 4, pollIntervalMs: 20 };
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

async function until(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('in-flight bounds hold overall and per webhook; a slow webhook does not starve a fast one', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { openDatabase, migrate } = await import('../../src/store/db.js');
  const dir = mkdtempSync(join(tmpdir(), 'svc-worker-'));
  const db = openDatabase(join(dir, 'svc.db'));
  try {
    migrate(db);
    const slow = createWebhook(db, box, { url: 'http://10.0.0.1/slow', events: [] }, new Date()).record;
    createWebhook(db, box, { url: 'http://10.0.0.2/fast', events: [] }, new Date());
    for (let i = 0; i < 40; i++) enqueueEvent(db, statusChanged(`bound-${i}`));
    let inFlight = 0;
    let maxInFlight = 0;
    const perUrl = new Map<string, number>();
    const maxPerUrl = new Map<string, number>();
    const finished = new Map<string, number[]>();
    const sender: Sender = {
      async send(input): Promise<AttemptOutcome> {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        perUrl.set(input.url, (perUrl.get(input.url) ?? 0) + 1);
        maxPerUrl.set(input.url, Math.max(maxPerUrl.get(input.url) ?? 0, perUrl.get(input.url) ?? 0));
        await new Promise((resolve) => setTimeout(resolve, input.url.endsWith('/slow') ? 100 : 2));
        inFlight -= 1;
        perUrl.set(input.url, (perUrl.get(input.url) ?? 1) - 1);
        finished.set(input.url, [...(finished.get(input.url) ?? []), Date.now()]);
        return { kind: 'delivered', status: 200 };
      },
      close: async () => undefined,
    };
    const worker = startDeliveryWorker({ db, settings, log: silent, signingSecret: () => 's', sender });
    try {
      await until('every delivery', () => countDeliveriesByStatus(db).delivered === 80);
    } finally {
      await worker.stop();
    }
    assert.ok(maxInFlight <= 8, `at most 8 in flight (saw ${maxInFlight})`);
    assert.equal(maxPerUrl.get('http://10.0.0.1/slow'), 4, 'the slow webhook is held to its own bound');
    assert.ok((maxPerUrl.get('http://10.0.0.2/fast') ?? 0) <= 4);
    const fastDone = Math.max(...(finished.get('http://10.0.0.2/fast') ?? []));
    const slowDone = Math.max(...(finished.get('http://10.0.0.1/slow') ?? []));
    assert.ok(fastDone < slowDone - 500, 'the fast webhook finished long before the slow one');
    assert.equal(listDeliveries(db, slow.id, 'delivered', 100).length, 40);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stop() cuts attempts in flight: they are due again at once and the cut attempt is not counted', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { openDatabase, migrate } = await import('../../src/store/db.js');
  const dir = mkdtempSync(join(tmpdir(), 'svc-worker-'));
  const db = openDatabase(join(dir, 'svc.db'));
  try {
    migrate(db);
    const hook = createWebhook(db, box, { url: 'http://10.0.0.1/hang', events: [] }, new Date()).record;
    enqueueEvent(db, statusChanged('stop'));
    let started = 0;
    const sender: Sender = {
      send: (_input, signal) =>
        new Promise<AttemptOutcome>((resolve) => {
          started += 1;
          signal?.addEventListener('abort', () => resolve({ kind: 'interrupted' }), { once: true });
        }),
      close: async () => undefined,
    };
    const worker = startDeliveryWorker({ db, settings, log: silent, signingSecret: () => 's', sender });
    await until('the attempt', () => started === 1);
    const before = Date.now();
    await worker.stop();
    assert.ok(Date.now() - before < 5_000, 'stop() does not wait for a hanging receiver beyond its grace');
    const [pending] = listDeliveries(db, hook.id, 'pending', 10);
    assert.equal(pending?.attempts, 0, 'the cut attempt is not charged');
    assert.ok(Date.parse(pending?.nextAttemptAt ?? '') <= Date.now(), 'due at once');
    assert.equal(db.prepare('SELECT leased_by FROM event_deliveries').pluck().get(), null, 'lease released');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
