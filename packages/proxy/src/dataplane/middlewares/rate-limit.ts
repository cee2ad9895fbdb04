// Token bucket per client address. The bucket state lives in a RateLimitState that the compiler hands over
// to the next route table when the route and its limits are unchanged.
import type { RateLimit } from '../../model/entrypoint.js';
import { clientAddress, plainReply, type Reply, type RequestContext, type TrustedProxies } from '../context.js';
import type { Middleware } from './types.js';

interface Bucket {
  tokens: number;
  /** ms timestamp of the last refill. */
  at: number;
}

/** Upper bound on tracked clients per route; full buckets are dropped first. */
const MAX_CLIENTS = 100_000;

export class RateLimitState {
  readonly buckets = new Map<string, Bucket>();
  readonly rate: number;
  readonly capacity: number;

  /** `average` tokens per second; capacity `burst`, or `average` when burst is below it (no burst window). */
  constructor(limit: RateLimit) {
    this.rate = limit.average;
    this.capacity = Math.max(limit.burst, limit.average, 1);
  }

  /** Seconds until a token is available, or 0 after taking one. */
  take(key: string, now: number): number {
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= MAX_CLIENTS) this.sweep(now);
      bucket = { tokens: this.capacity, at: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.rate);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / this.rate;
  }

  private sweep(now: number): void {
    const fullAfterMs = (this.capacity / this.rate) * 1000;
    for (const [key, bucket] of this.buckets) if (now - bucket.at >= fullAfterMs) this.buckets.delete(key);
    if (this.buckets.size >= MAX_CLIENTS) this.buckets.clear();
  }
}

export function rateLimitKey(limit: RateLimit): string {
  return `${limit.average}/${limit.burst}`;
}

export class RateLimiter implements Middleware {
  readonly name = 'rate_limit';
  constructor(
    readonly state: RateLimitState,
    private readonly trusted: TrustedProxies,
  ) {}

  handle(ctx: RequestContext): Reply | null {
    const wait = this.state.take(clientAddress(ctx, this.trusted), Date.now());
    if (wait === 0) return null;
    return plainReply(429, 'too many requests', { 'retry-after': String(Math.max(1, Math.ceil(wait))) });
  }
}
