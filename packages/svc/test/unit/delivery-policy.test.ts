import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_DELIVERY_POLICY,
  LEASE_GRACE_MS,
  leaseExpiry,
  nominalDelayMs,
  nominalSchedule,
  outcomeOfStatus,
  retryDelayMs,
  settle,
  type DeliveryPolicy,
} from '../../src/webhooks/policy.js';
import { deliverySettingsFromEnv, DEFAULT_DELIVERY_SETTINGS } from '../../src/webhooks/settings.js';

const policy: DeliveryPolicy = { maxAttempts: 4, baseDelayMs: 1000, factor: 2, maxDelayMs: 3000, attemptTimeoutMs: 500 };
const now = new Date('2026-01-01T00:00:00.000Z');

test('backoff: exponential nominal waits, capped', () => {
  assert.deepEqual([1, 2, 3, 4, 5].map((n) => nominalDelayMs(n, policy)), [1000, 2000, 3000, 3000, 3000]);
  assert.deepEqual(nominalSchedule(policy), [1000, 2000, 3000], 'one wait between each pair of attempts');
  assert.deepEqual(nominalSchedule(DEFAULT_DELIVERY_POLICY), [5_000, 20_000, 80_000, 320_000, 1_280_000, 5_120_000, 20_480_000]);
});

test('backoff: equal jitter keeps every wait within [nominal/2, nominal]', () => {
  for (let failed = 1; failed <= 6; failed++) {
    const nominal = nominalDelayMs(failed, policy);
    assert.equal(retryDelayMs(failed, policy, 0), nominal / 2);
    assert.equal(retryDelayMs(failed, policy, 0.999999), nominal);
    for (let i = 0; i < 50; i++) {
      const delay = retryDelayMs(failed, policy, Math.random());
      assert.ok(delay >= nominal / 2 && delay <= nominal, `${delay} in [${nominal / 2}, ${nominal}]`);
    }
  }
  assert.equal(retryDelayMs(1, policy, -5), 500, 'out-of-range randomness is clamped');
  assert.equal(retryDelayMs(1, policy, 7), 1000);
});

test('settle: 2xx delivers; failures retry with backoff until the last attempt, then dead-letter', () => {
  assert.deepEqual(settle({ kind: 'delivered', status: 204 }, 1, policy, now, 0.5), { status: 'delivered', at: now.toISOString() });
  const retry = settle({ kind: 'failed', error: 'HTTP 500' }, 1, policy, now, 0);
  assert.deepEqual(retry, { status: 'pending', nextAttemptAt: new Date(now.getTime() + 500).toISOString(), lastError: 'HTTP 500', countsAsAttempt: true });
  const third = settle({ kind: 'failed', error: 'timed out' }, 3, policy, now, 0.999999);
  assert.equal(third.status, 'pending');
  assert.equal(third.status === 'pending' && third.nextAttemptAt, new Date(now.getTime() + 3000).toISOString());
  assert.deepEqual(settle({ kind: 'failed', error: 'HTTP 500' }, 4, policy, now, 0), { status: 'dead', at: now.toISOString(), lastError: 'HTTP 500' });
  assert.equal(settle({ kind: 'failed', error: 'x' }, 9, policy, now, 0).status, 'dead', 'beyond the bound is dead too');
  const long = settle({ kind: 'failed', error: 'e'.repeat(5000) }, 4, policy, now, 0);
  assert.ok(long.status === 'dead' && long.lastError.length <= 500, 'stored errors are bounded');
});

test('settle: an attempt cut by shutdown is due at once and does not count', () => {
  assert.deepEqual(settle({ kind: 'interrupted' }, 4, policy, now, 0), { status: 'pending', nextAttemptAt: now.toISOString(), lastError: null, countsAsAttempt: false });
});

test('outcomeOfStatus: only 2xx delivers; 3xx is a failure naming the unfollowed redirect', () => {
  assert.deepEqual(outcomeOfStatus(200, null), { kind: 'delivered', status: 200 });
  assert.deepEqual(outcomeOfStatus(299, null), { kind: 'delivered', status: 299 });
  const redirect = outcomeOfStatus(302, 'http://10.0.0.9/elsewhere');
  assert.equal(redirect.kind, 'failed');
  assert.match(redirect.kind === 'failed' ? redirect.error : '', /redirect not followed.*10\.0\.0\.9/);
  assert.deepEqual(outcomeOfStatus(404, null), { kind: 'failed', error: 'HTTP 404' });
  assert.deepEqual(outcomeOfStatus(503, null), { kind: 'failed', error: 'HTTP 503' });
});

test('leases: expire after the attempt timeout plus a grace, so a slow but live attempt is not sent twice at once', () => {
  assert.equal(leaseExpiry(now, policy).getTime(), now.getTime() + 500 + LEASE_GRACE_MS);
  assert.ok(leaseExpiry(now, DEFAULT_DELIVERY_POLICY).getTime() - now.getTime() > DEFAULT_DELIVERY_POLICY.attemptTimeoutMs);
});

test('settings: defaults, overrides, and refusals that name the variable', () => {
  assert.deepEqual(deliverySettingsFromEnv({}), DEFAULT_DELIVERY_SETTINGS);
  const custom = deliverySettingsFromEnv({
    SVC_WEBHOOK_MAX_ATTEMPTS: '3',
    SVC_WEBHOOK_BACKOFF_BASE_MS: '50',
    SVC_WEBHOOK_BACKOFF_MAX_MS: '200',
    SVC_WEBHOOK_TIMEOUT_MS: '400',
    SVC_WEBHOOK_CONCURRENCY: '4',
    SVC_WEBHOOK_RETENTION_HOURS: '2',
  });
  assert.deepEqual(custom.policy, { ...DEFAULT_DELIVERY_POLICY, maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 200, attemptTimeoutMs: 400 });
  assert.equal(custom.concurrency, 4);
  assert.equal(custom.perWebhookConcurrency, 4, 'per-webhook bound never exceeds the overall one');
  assert.equal(custom.retentionMs, 2 * 3600_000);
  assert.throws(() => deliverySettingsFromEnv({ SVC_WEBHOOK_MAX_ATTEMPTS: '0' }), /SVC_WEBHOOK_MAX_ATTEMPTS/);
  assert.throws(() => deliverySettingsFromEnv({ SVC_WEBHOOK_TIMEOUT_MS: '1e3' }), /SVC_WEBHOOK_TIMEOUT_MS/);
  assert.throws(() => deliverySettingsFromEnv({ SVC_WEBHOOK_CONCURRENCY: '-1' }), /SVC_WEBHOOK_CONCURRENCY/);
  assert.throws(() => deliverySettingsFromEnv({ SVC_WEBHOOK_BACKOFF_BASE_MS: '5000', SVC_WEBHOOK_BACKOFF_MAX_MS: '10' }), /SVC_WEBHOOK_BACKOFF_MAX_MS/);
});
