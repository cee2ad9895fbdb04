// The delivery worker: claims due deliveries in batches (with leases), sends them concurrently with a bound
// (overall and per webhook), and records the results in batches. At-least-once: a delivery is marked delivered
// only after a 2xx; if the process dies in between, the lease expires (or the next start reclaims it) and the
// delivery is sent again. Decisions are policy.ts; SQL is queue.ts; HTTP is sender.ts.
import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import { settle, leaseExpiry, type AttemptOutcome } from './policy.js';
import { claimDue, nextDueAt, pruneDelivered, reclaimForeignLeases, settleDeliveries, type Claim, type ClaimedDelivery, type SettledDelivery } from './queue.js';
import { createSender, type Sender } from './sender.js';
import { deliveryHeaders, deliveryId } from './signer.js';
import type { DeliverySettings } from './settings.js';
import { isWebhookEventKind } from '../domain/events.js';

export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
}

export interface DeliveryWorkerDeps {
  db: Db;
  settings: DeliverySettings;
  /** The clear signing secret of a webhook, or null when it is unknown. */
  signingSecret(webhookId: string): string | null;
  log: WorkerLog;
  now?: () => Date;
  random?: () => number;
  sender?: Sender;
}

export interface DeliveryWorker {
  /** This process's worker instance id (the `leased_by` of its claims). */
  readonly id: string;
  /** Look for due deliveries now instead of at the next poll (e.g. right after an enqueue). */
  wake(): void;
  /** Stops claiming, lets attempts in flight finish for a short grace, cuts the rest (they stay due), records results. */
  stop(): Promise<void>;
}

/** Most deliveries claimed by one transaction. */
const CLAIM_BATCH = 256;
/** Attempts still running when stop() is called get this long before they are cut. */
const STOP_GRACE_MS = 2_000;
/**
 * While attempts are in flight, refills wait this long after the previous one, so that one claim and one
 * result transaction cover many deliveries instead of one each (a transaction has a fixed cost).
 */
const REFILL_INTERVAL_MS = 5;
const PRUNE_INTERVAL_MS = 60_000;
const PRUNE_BATCH = 2_000;
const PRUNE_MAX_BATCHES_PER_RUN = 10;

interface InFlight {
  webhookId: string;
  controller: AbortController;
  done: Promise<void>;
}

export function startDeliveryWorker(deps: DeliveryWorkerDeps): DeliveryWorker {
  const { db, settings, log } = deps;
  const now = deps.now ?? (() => new Date());
  const random = deps.random ?? Math.random;
  const sender = deps.sender ?? createSender({ attemptTimeoutMs: settings.policy.attemptTimeoutMs });
  const id = randomUUID();
  const inFlight = new Map<string, InFlight>();
  const perWebhook = new Map<string, number>();
  const secrets = new Map<string, string>();
  let results: SettledDelivery[] = [];
  let stopping = false;
  let pumpScheduled = false;
  let idleTimer: NodeJS.Timeout | null = null;
  let lastRefill = 0;

  function schedulePump(): void {
    if (pumpScheduled || stopping) return;
    pumpScheduled = true;
    if (idleTimer) {
      clearTimeout(idleTimer);
      idleTimer = null;
    }
    const wait = inFlight.size > 0 ? lastRefill + REFILL_INTERVAL_MS - performance.now() : 0;
    if (wait > 0) setTimeout(pump, wait);
    else setImmediate(pump);
  }

  function sleepThenPump(ms: number): void {
    if (stopping || pumpScheduled) return;
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      idleTimer = null;
      schedulePump();
    }, Math.max(1, ms));
    idleTimer.unref();
  }

  /** Records the buffered results; with `claim`, claims in the SAME transaction (one commit per refill). */
  function flushAndClaim(claim: { limit: number } | null): Claim {
    const batch = results;
    results = [];
    let claimed: Claim = { claimed: [], capped: false };
    try {
      db.transaction(() => {
        settleDeliveries(db, id, batch);
        if (claim) {
          const at = now();
          claimed = claimDue(db, id, at, leaseExpiry(at, settings.policy), claim.limit, perWebhook, settings.perWebhookConcurrency);
        }
      }).immediate();
    } catch (error) {
      // Not recorded: keep them for the next try (their leases keep them from being sent meanwhile).
      results = batch.concat(results);
      throw error;
    }
    for (const { eventId, webhookId, settlement } of batch) {
      if (settlement.status === 'dead') log.warn({ webhook_id: webhookId, event_id: eventId, last_error: settlement.lastError }, 'webhook delivery dead-lettered');
    }
    return claimed;
  }

  function flush(): void {
    if (results.length > 0) flushAndClaim(null);
  }

  function pump(): void {
    pumpScheduled = false;
    try {
      const free = settings.concurrency - inFlight.size;
      if (stopping || free <= 0) {
        // A completion schedules the next pump; results are recorded now all the same.
        flush();
        return;
      }
      lastRefill = performance.now();
      const requested = Math.min(free, CLAIM_BATCH);
      const { claimed, capped } = flushAndClaim({ limit: requested });
      for (const delivery of claimed) start(delivery);
      if (inFlight.size >= settings.concurrency) return;
      // A full batch, or rows left for webhooks at their bound: other webhooks may have due rows behind them.
      if (claimed.length === requested || (capped && claimed.length > 0)) return schedulePump();
      // Nothing more is due now for a webhook with a free slot: sleep until the next due time, at most one poll
      // interval (events enqueued meanwhile are found by the poll). A due time in the past belongs to a
      // saturated webhook, whose completions pump again.
      const due = nextDueAt(db);
      const untilDue = due === null ? Infinity : Date.parse(due) - now().getTime();
      sleepThenPump(untilDue > 0 ? Math.min(untilDue, settings.pollIntervalMs) : settings.pollIntervalMs);
    } catch (error) {
      log.error({ err: error }, 'webhook delivery loop failed; retrying');
      sleepThenPump(settings.pollIntervalMs);
    }
  }

  function secretOf(webhookId: string): string | null {
    const cached = secrets.get(webhookId);
    if (cached !== undefined) return cached;
    // A webhook's secret never changes (there is no update), so it is opened once per process.
    const secret = deps.signingSecret(webhookId);
    if (secret !== null) secrets.set(webhookId, secret);
    return secret;
  }

  async function attempt(delivery: ClaimedDelivery, signal: AbortSignal): Promise<AttemptOutcome> {
    // X-Svc-Event must be truthful; a row outside the vocabulary ends as a dead letter for an operator to see.
    if (!isWebhookEventKind(delivery.kind)) return { kind: 'failed', error: `unknown event kind '${delivery.kind.slice(0, 100)}'` };
    let secret: string | null;
    try {
      secret = secretOf(delivery.webhookId);
    } catch {
      return { kind: 'failed', error: 'the signing secret cannot be opened (was SVC_SECRET_KEY changed?)' };
    }
    if (secret === null) return { kind: 'failed', error: 'webhook not found' };
    const headers = deliveryHeaders({
      secret,
      kind: delivery.kind,
      deliveryId: deliveryId(delivery.eventId, delivery.webhookId),
      timestamp: Math.floor(now().getTime() / 1000),
      body: delivery.payload,
    });
    return sender.send({ url: delivery.url, headers, body: delivery.payload }, signal);
  }

  function start(delivery: ClaimedDelivery): void {
    const key = `${delivery.eventId}/${delivery.webhookId}`;
    const controller = new AbortController();
    perWebhook.set(delivery.webhookId, (perWebhook.get(delivery.webhookId) ?? 0) + 1);
    const done = attempt(delivery, controller.signal)
      .catch((error: unknown): AttemptOutcome => ({ kind: 'failed', error: error instanceof Error ? error.message : 'delivery failed' }))
      .then((outcome) => {
        inFlight.delete(key);
        const left = (perWebhook.get(delivery.webhookId) ?? 1) - 1;
        if (left <= 0) perWebhook.delete(delivery.webhookId);
        else perWebhook.set(delivery.webhookId, left);
        results.push({
          eventId: delivery.eventId,
          webhookId: delivery.webhookId,
          settlement: settle(outcome, delivery.attempts, settings.policy, now(), random()),
        });
        schedulePump();
      });
    inFlight.set(key, { webhookId: delivery.webhookId, controller, done });
  }

  function prune(): void {
    try {
      const cutoff = new Date(now().getTime() - settings.retentionMs);
      for (let i = 0; i < PRUNE_MAX_BATCHES_PER_RUN; i++) {
        const removed = pruneDelivered(db, cutoff, PRUNE_BATCH);
        if (removed.deliveries < PRUNE_BATCH && removed.events < PRUNE_BATCH) break;
      }
    } catch (error) {
      log.error({ err: error }, 'webhook retention pruning failed');
    }
  }

  const reclaimed = reclaimForeignLeases(db, id, now());
  if (reclaimed > 0) log.info({ reclaimed }, 'webhook deliveries in flight at the last stop are due again');
  const pruneTimer = setInterval(prune, PRUNE_INTERVAL_MS);
  pruneTimer.unref();
  prune();
  schedulePump();

  return {
    id,
    wake: schedulePump,
    async stop() {
      if (stopping) return;
      stopping = true;
      clearInterval(pruneTimer);
      if (idleTimer) clearTimeout(idleTimer);
      const running = [...inFlight.values()];
      if (running.length > 0) {
        let grace: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.all(running.map((f) => f.done)),
          new Promise<void>((resolve) => {
            grace = setTimeout(resolve, STOP_GRACE_MS);
          }),
        ]);
        clearTimeout(grace);
        for (const flight of inFlight.values()) flight.controller.abort();
        await Promise.all([...inFlight.values()].map((f) => f.done));
      }
      try {
        flush();
      } catch (error) {
        log.error({ err: error }, 'webhook delivery results could not be recorded; they will be sent again');
      }
      await sender.close();
    },
  };
}
