// Webhook delivery benchmark. Needs root (it creates a network namespace for the receiver, as the tests do).
// Run: node --import tsx bench/webhooks/throughput.ts [events]
// BENCH_ONLY=enqueue runs part 1 only; BENCH_ONLY=worker runs parts 3 and 2 only.
//
// 1. Enqueue cost on the status-change path: enqueueEvent (store/outbox.ts) called inside an open transaction
//    (as the status-change path calls it; the commit is the status change's), and as a transaction of its own
//    (commit included), with 1 and with 5 subscribed webhooks; p50 / p99 / max. Plus a CPU-only noise floor.
// 2. Delivery throughput: the real delivery worker (webhooks/worker.ts, default settings: 128 in flight, 64 to one webhook, signed
//    POSTs through the guarded undici Agent, leased batched claims, batched settlement) drains N pending events
//    to a fast receiver in a network namespace. Enqueue p99 is measured again while it runs.
// 3. Peer, same run, same receiver: a bare loop of undici POSTs of the same body and
//    nothing else (no database, no signing), with as many in flight as the worker sends to one webhook (64).
//    The ratio worker / peer is printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { migrate, openDatabase, type Db } from '../../packages/svc/src/store/db.js';
import { createSecretBox } from '../../packages/svc/src/crypto/secret-box.js';
import { createWebhook } from '../../packages/svc/src/store/webhooks.js';
import { countDeliveriesByStatus, enqueueEvent } from '../../packages/svc/src/store/outbox.js';
import { webhookEvent, type WebhookEvent } from '../../packages/svc/src/domain/events.js';
import { startDeliveryWorker } from '../../packages/svc/src/webhooks/worker.js';
import { DEFAULT_DELIVERY_SETTINGS } from '../../packages/svc/src/webhooks/settings.js';
import { startNetnsReceiver, type NetnsReceiver } from '../../packages/svc/test/support/netns-receiver.js';

const EVENTS = Number(process.argv[2] ?? 20_000);
const ENQUEUE_SAMPLES = 20_000;
const box = createSecretBox(randomBytes(32));

function event(i: number): WebhookEvent {
  return webhookEvent(
    'deployment.status_changed',
    { id: `00000000-0000-4000-8000-${String(i % 1e12).padStart(12, '0')}`, namespace: 'bench', name: `web-${i}`, kind: 'worker' },
    { old_status: 'creating', new_status: 'running', restart_count: 0 },
  );
}

function freshDb(dir: string, name: string): Db {
  const db = openDatabase(join(dir, name));
  migrate(db);
  return db;
}

function percentiles(samples: number[]): { p50: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 };
}

function timeEnqueue(db: Db, i: number): number {
  const started = process.hrtime.bigint();
  enqueueEvent(db, event(i));
  return Number(process.hrtime.bigint() - started) / 1e6;
}

const ms = (value: number) => `${value.toFixed(3)} ms`;

/** The machine's own tail: the same number of ~50 µs CPU-only steps (no syscalls), timed the same way. */
function noiseFloor(): void {
  const samples = Array.from({ length: ENQUEUE_SAMPLES }, () => {
    const started = process.hrtime.bigint();
    let x = 0;
    for (let i = 0; i < 40_000; i++) x = (x * 31 + i) % 1_000_003;
    if (x < 0) console.log(x);
    return Number(process.hrtime.bigint() - started) / 1e6;
  });
  const { p50, p99, max } = percentiles(samples);
  console.log(`noise floor (CPU only), ${samples.length} steps: p50 ${ms(p50)}  p99 ${ms(p99)}  max ${ms(max)}`);
}

/** The enqueue call alone, inside an open transaction: what the status-change path adds to its own transaction. */
function timeEnqueueInTransaction(db: Db, i: number): number {
  let elapsed = 0;
  db.transaction(() => {
    elapsed = timeEnqueue(db, i);
  })();
  return elapsed;
}

async function enqueueCost(dir: string, receiver: NetnsReceiver): Promise<void> {
  for (const subscribers of [1, 5]) {
    const db = freshDb(dir, `enqueue-${subscribers}.db`);
    for (let i = 0; i < subscribers; i++) createWebhook(db, box, { url: receiver.url(`/sub-${i}`), events: i % 2 === 0 ? [] : ['deployment.*'] }, new Date());
    for (let i = 0; i < 500; i++) enqueueEvent(db, event(i)); // warm-up: statements prepared, pages cached
    const report = (label: string, samples: number[]) => {
      const { p50, p99, max } = percentiles(samples);
      console.log(`enqueue ${label}, ${subscribers} subscriber(s), ${samples.length} calls: p50 ${ms(p50)}  p99 ${ms(p99)}  max ${ms(max)}`);
    };
    report('inside the status-change transaction', Array.from({ length: ENQUEUE_SAMPLES }, (_, i) => timeEnqueueInTransaction(db, i)));
    report('as its own transaction (commit included)', Array.from({ length: ENQUEUE_SAMPLES }, (_, i) => timeEnqueue(db, i)));
    db.close();
  }
}

async function workerThroughput(dir: string, receiver: NetnsReceiver): Promise<number> {
  const db = freshDb(dir, 'deliver.db');
  const hook = createWebhook(db, box, { url: receiver.url('/deliver'), events: [] }, new Date());
  db.transaction(() => {
    for (let i = 0; i < EVENTS; i++) enqueueEvent(db, event(i));
  })();
  await receiver.reset();
  await receiver.quiet(true);
  const log = { info: () => undefined, warn: () => undefined, error: (o: object, m: string) => console.error(m, o) };
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const worker = startDeliveryWorker({ db, settings: DEFAULT_DELIVERY_SETTINGS, log, signingSecret: () => hook.secret });
  const anyPending = db.prepare("SELECT 1 FROM event_deliveries WHERE status = 'pending' LIMIT 1");
  const underLoad: number[] = [];
  let extra = 0;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    // An index probe, not a count: the harness must not take the worker's event loop.
    if (anyPending.get() === undefined) break;
    if (performance.now() - started > 120_000) throw new Error(`not drained after 120 s: ${JSON.stringify(countDeliveriesByStatus(db))}`);
    // The status-change path keeps enqueueing while the worker drains the queue.
    underLoad.push(timeEnqueueInTransaction(db, EVENTS + extra++));
  }
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await worker.stop();
  const counts = countDeliveriesByStatus(db);
  const received = await receiver.count();
  const total = EVENTS + extra;
  const rate = counts.delivered / elapsed;
  const { p99, max } = percentiles(underLoad);
  console.log(
    `worker: ${counts.delivered}/${total} delivered (${counts.dead} dead), receiver saw ${received}, in ${elapsed.toFixed(2)} s = ${rate.toFixed(0)} events/s`,
  );
  console.log(`worker CPU: ${((cpu.user + cpu.system) / 1000 / (counts.delivered / 1000)).toFixed(1)} ms per 1000 events (user+system, this process)`);
  console.log(`enqueue inside a transaction while delivering, ${underLoad.length} calls: p99 ${ms(p99)}  max ${ms(max)}`);
  db.close();
  return rate;
}

async function bareLoop(receiver: NetnsReceiver): Promise<number> {
  const body = JSON.stringify(event(1).payload);
  const agent = new Agent({ keepAliveTimeout: 4_000 });
  const url = receiver.url('/bare');
  let next = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const lane = async () => {
    while (next < EVENTS) {
      next += 1;
      const response = await request(url, { dispatcher: agent, method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await response.body.dump();
    }
  };
  await Promise.all(Array.from({ length: DEFAULT_DELIVERY_SETTINGS.perWebhookConcurrency }, lane));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await agent.close();
  const rate = EVENTS / elapsed;
  console.log(`peer CPU: ${((cpu.user + cpu.system) / 1000 / (EVENTS / 1000)).toFixed(1)} ms per 1000 requests`);
  console.log(`peer, bare undici POST loop (${DEFAULT_DELIVERY_SETTINGS.perWebhookConcurrency} in flight): ${EVENTS} in ${elapsed.toFixed(2)} s = ${rate.toFixed(0)} req/s`);
  return rate;
}

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-webhooks-'));
const receiver = await startNetnsReceiver();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void receiver.close().finally(() => process.exit(130));
  });
}
try {
  await receiver.quiet(true);
  console.log(`receiver: ${receiver.url('/')} (namespace ${receiver.namespace}); ${EVENTS} events`);
  const only = process.env.BENCH_ONLY;
  if (only === 'worker') {
    await bareLoop(receiver);
    await workerThroughput(dir, receiver);
    process.exitCode = 0;
  } else if (only === 'enqueue') {
    noiseFloor();
    await enqueueCost(dir, receiver);
  } else {
  noiseFloor();
  await enqueueCost(dir, receiver);
  const peer = await bareLoop(receiver);
  const worker = await workerThroughput(dir, receiver);
  console.log(`ratio worker / bare loop: ${(worker / peer).toFixed(2)}`);
  }
} finally {
  await receiver.close();
  rmSync(dir, { recursive: true, force: true });
}
