// The delivery policy, pure: how long to wait before the next attempt (exponential backoff with jitter), when a
// delivery becomes a dead letter, how long a claimed delivery is leased, and what one attempt's outcome turns
// into. The worker (worker.ts) and the queue (queue.ts) only apply these decisions.

export interface DeliveryPolicy {
  /** Attempts in total (the first one included) before a delivery becomes a dead letter. */
  maxAttempts: number;
  /** Nominal wait after the first failed attempt. */
  baseDelayMs: number;
  /** Each further failure multiplies the nominal wait by this factor. */
  factor: number;
  /** Nominal waits are capped here. */
  maxDelayMs: number;
  /** Whole budget of one attempt: connect, send, response headers and body. */
  attemptTimeoutMs: number;
}

/**
 * 8 attempts; nominal waits 5 s, 20 s, 80 s, 5 min 20 s, 21 min 20 s, 1 h 25 min, 5 h 41 min (before jitter),
 * so a receiver that is down for a few hours still gets its events. docs/svc/webhooks.md has the table.
 */
export const DEFAULT_DELIVERY_POLICY: DeliveryPolicy = {
  maxAttempts: 8,
  baseDelayMs: 5_000,
  factor: 4,
  maxDelayMs: 6 * 60 * 60 * 1000,
  attemptTimeoutMs: 10_000,
};

/** A lease outlives the attempt by this much, so a slow but live attempt is never delivered twice at once. */
export const LEASE_GRACE_MS = 5_000;

/** Nominal wait (no jitter) after `failedAttempts` failures (1 = after the first attempt failed). */
export function nominalDelayMs(failedAttempts: number, policy: DeliveryPolicy): number {
  const exponent = Math.max(0, failedAttempts - 1);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * policy.factor ** exponent);
}

/**
 * "Equal jitter": half the nominal wait is fixed, the other half random, so retries of many deliveries that
 * failed together (a receiver outage) spread out, and no retry comes sooner than half the nominal wait.
 * `random` is in [0, 1).
 */
export function retryDelayMs(failedAttempts: number, policy: DeliveryPolicy, random: number): number {
  const nominal = nominalDelayMs(failedAttempts, policy);
  const clamped = Math.min(Math.max(random, 0), 1);
  return Math.round(nominal / 2 + (nominal / 2) * clamped);
}

/** The nominal schedule: wait before attempt 2, 3, ... maxAttempts. */
export function nominalSchedule(policy: DeliveryPolicy): number[] {
  return Array.from({ length: Math.max(0, policy.maxAttempts - 1) }, (_, i) => nominalDelayMs(i + 1, policy));
}

/** When a delivery claimed at `now` may be claimed again if its worker vanished (crash, kill -9). */
export function leaseExpiry(now: Date, policy: DeliveryPolicy): Date {
  return new Date(now.getTime() + policy.attemptTimeoutMs + LEASE_GRACE_MS);
}

export type AttemptOutcome =
  | { kind: 'delivered'; status: number }
  /** Any failure: non-2xx status (3xx included: redirects are not followed), time-out, refused address, network. */
  | { kind: 'failed'; error: string }
  /** The worker is stopping: the attempt was cut, it does not count against the delivery. */
  | { kind: 'interrupted' };

export type Settlement =
  | { status: 'delivered'; at: string }
  | { status: 'pending'; nextAttemptAt: string; lastError: string | null; countsAsAttempt: boolean }
  | { status: 'dead'; at: string; lastError: string };

/**
 * What one attempt's outcome makes of a delivery. `attempts` counts the attempts made so far, this one
 * included (the claim counted it, so a crash mid-attempt still counts).
 */
export function settle(outcome: AttemptOutcome, attempts: number, policy: DeliveryPolicy, now: Date, random: number): Settlement {
  const at = now.toISOString();
  if (outcome.kind === 'delivered') return { status: 'delivered', at };
  if (outcome.kind === 'interrupted') return { status: 'pending', nextAttemptAt: at, lastError: null, countsAsAttempt: false };
  const lastError = clipError(outcome.error);
  if (attempts >= policy.maxAttempts) return { status: 'dead', at, lastError };
  const next = new Date(now.getTime() + retryDelayMs(attempts, policy, random));
  return { status: 'pending', nextAttemptAt: next.toISOString(), lastError, countsAsAttempt: true };
}

export const LAST_ERROR_MAX_LENGTH = 500;

export function clipError(text: string): string {
  return text.length > LAST_ERROR_MAX_LENGTH ? `${text.slice(0, LAST_ERROR_MAX_LENGTH - 1)}…` : text;
}

/** The response status classes: only 2xx is a delivery. */
export function outcomeOfStatus(status: number, location: string | null): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status >= 300 && status < 400) {
    return { kind: 'failed', error: `HTTP ${status}: redirect not followed${location ? ` (location: ${location.slice(0, 200)})` : ''}` };
  }
  return { kind: 'failed', error: `HTTP ${status}` };
}
