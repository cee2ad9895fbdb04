// Nothing is lost when the server is killed: 100 events are pending, the server is killed with SIGKILL while
// it delivers them, and after a restart every one arrives, with at most the few that were on the wire twice.
// Then a graceful stop while a receiver hangs: the cut attempts are sent again after the restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { startNetnsReceiver, type NetnsReceiver } from '../support/netns-receiver.js';
import { createWebhook, deliveries, enqueue, eventsByStatus, statusChanged, waitUntil } from './delivery-support.js';

const CONCURRENCY = 4;
let server: TestServer;
let receiver: NetnsReceiver;
before(async () => {
  receiver = await startNetnsReceiver();
  server = await startTestServer({
    env: { SVC_WEBHOOK_CONCURRENCY: String(CONCURRENCY), SVC_WEBHOOK_TIMEOUT_MS: '2000', SVC_WEBHOOK_BACKOFF_BASE_MS: '100', SVC_WEBHOOK_BACKOFF_MAX_MS: '300' },
  });
});
after(async () => {
  await server?.close();
  await receiver?.close();
});

const deliveryIdOf = (headers: Record<string, string | string[] | undefined>) => String(headers['x-svc-delivery']);

test('kill -9 with 100 events pending, then restart: all 100 delivered, at most a few twice', async (t) => {
  // Slow answers (40 ms, 4 at a time: about 100 per second) so the kill lands in the middle of the queue.
  await receiver.behave('/kill', [{ status: 200, delayMs: 40 }]);
  const hook = await createWebhook(server, receiver.url('/kill'));
  await server.stop();
  const eventIds = enqueue(
    server,
    Array.from({ length: 100 }, (_, i) => statusChanged(`kill-${i}`)),
  );
  assert.equal(new Set(eventIds).size, 100);

  await server.restart();
  await receiver.waitFor((r) => r.filter((x) => x.path === '/kill').length >= 20, 20_000, '20 deliveries before the kill');
  await server.kill();
  const beforeKill = receiver.requests('/kill').length;
  assert.ok(beforeKill < 100, `the kill came before the end (${beforeKill} received)`);

  await server.restart();
  await waitUntil('every event delivered after the restart', 30_000, async () => (await deliveries(server, hook.id, 'delivered')).length === 100 || null);
  const received = receiver.requests('/kill');
  const distinct = new Set(received.map((r) => deliveryIdOf(r.headers)));
  assert.equal(distinct.size, 100, 'every event arrived');
  const duplicates = received.length - distinct.size;
  t.diagnostic(`${beforeKill} received before the kill; ${duplicates} duplicates after the restart`);
  // At most the attempts in flight at the kill (the concurrency bound) plus results not yet recorded.
  assert.ok(duplicates <= CONCURRENCY * 2, `${duplicates} duplicates`);
  const metrics = await eventsByStatus(server);
  assert.equal(metrics.pending, 0);
});

test('graceful stop cuts hanging attempts without losing them; they are sent again after the restart', async () => {
  await receiver.behave('/hang', [{ status: 200, delayMs: 60_000 }, { status: 200 }]);
  const hook = await createWebhook(server, receiver.url('/hang'));
  const [eventId] = enqueue(server, [statusChanged('hang')]);
  await receiver.waitFor((r) => r.some((x) => x.path === '/hang'), 10_000, 'the hanging attempt');
  const { code, ms } = await server.stop();
  assert.equal(code, 0);
  assert.ok(ms < 10_000, `stopped in ${ms} ms`);
  await server.restart();
  const [delivered] = await waitUntil('the cut delivery', 15_000, async () => {
    const list = await deliveries(server, hook.id, 'delivered');
    return list.length > 0 ? list : null;
  });
  assert.equal(delivered?.event_id, eventId);
  assert.equal(receiver.requests('/hang').length >= 2, true);
});
