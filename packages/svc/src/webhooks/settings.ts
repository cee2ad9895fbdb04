// Delivery settings from the environment (documented in docs/svc/webhooks.md). Pure: the server start-up turns a
// thrown error into a start-up refusal that names the variable.
import { DEFAULT_DELIVERY_POLICY, type DeliveryPolicy } from './policy.js';

export interface DeliverySettings {
  policy: DeliveryPolicy;
  /** Attempts in flight at once, all webhooks together. */
  concurrency: number;
  /** Attempts in flight at once to one webhook, so one slow receiver cannot take every slot. */
  perWebhookConcurrency: number;
  /** Delivered deliveries (and their events, once no delivery refers to them) are deleted after this. */
  retentionMs: number;
  /** How often an idle worker looks for newly enqueued events. */
  pollIntervalMs: number;
}

export const DEFAULT_DELIVERY_SETTINGS: DeliverySettings = {
  policy: DEFAULT_DELIVERY_POLICY,
  concurrency: 128,
  perWebhookConcurrency: 64,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  pollIntervalMs: 200,
};

interface IntegerVariable {
  name: string;
  min: number;
  max: number;
  apply(settings: DeliverySettings, value: number): DeliverySettings;
}

const HOUR_MS = 60 * 60 * 1000;

const VARIABLES: readonly IntegerVariable[] = [
  { name: 'SVC_WEBHOOK_MAX_ATTEMPTS', min: 1, max: 50, apply: (s, v) => ({ ...s, policy: { ...s.policy, maxAttempts: v } }) },
  { name: 'SVC_WEBHOOK_BACKOFF_BASE_MS', min: 1, max: HOUR_MS, apply: (s, v) => ({ ...s, policy: { ...s.policy, baseDelayMs: v } }) },
  { name: 'SVC_WEBHOOK_BACKOFF_MAX_MS', min: 1, max: 7 * 24 * HOUR_MS, apply: (s, v) => ({ ...s, policy: { ...s.policy, maxDelayMs: v } }) },
  { name: 'SVC_WEBHOOK_TIMEOUT_MS', min: 100, max: 120_000, apply: (s, v) => ({ ...s, policy: { ...s.policy, attemptTimeoutMs: v } }) },
  { name: 'SVC_WEBHOOK_CONCURRENCY', min: 1, max: 1024, apply: (s, v) => ({ ...s, concurrency: v, perWebhookConcurrency: Math.min(s.perWebhookConcurrency, v) }) },
  { name: 'SVC_WEBHOOK_RETENTION_HOURS', min: 1, max: 24 * 365, apply: (s, v) => ({ ...s, retentionMs: v * HOUR_MS }) },
];

/** Throws an Error naming the variable when a value is not an integer in its range. */
export function deliverySettingsFromEnv(env: NodeJS.ProcessEnv): DeliverySettings {
  let settings = DEFAULT_DELIVERY_SETTINGS;
  for (const variable of VARIABLES) {
    const raw = env[variable.name];
    if (raw === undefined || raw === '') continue;
    if (!/^[0-9]{1,10}$/.test(raw.trim()) || Number(raw) < variable.min || Number(raw) > variable.max) {
      throw new Error(`${variable.name}: must be an integer from ${variable.min} to ${variable.max}, got '${raw.slice(0, 40)}'`);
    }
    settings = variable.apply(settings, Number(raw));
  }
  if (settings.policy.maxDelayMs < settings.policy.baseDelayMs) {
    throw new Error('SVC_WEBHOOK_BACKOFF_MAX_MS: must be at least SVC_WEBHOOK_BACKOFF_BASE_MS');
  }
  return settings;
}
