// Webhook creation rules (spec "Webhooks"): the URL rule (webhook-url.ts) and the filter rule
// (webhook-filter.ts), every violation reported at once.
import type { Violation } from './violations.js';
import { eventFilterProblem } from './webhook-filter.js';
import { webhookUrlProblem } from './webhook-url.js';

export const WEBHOOK_EVENTS_MAX = 32;
export const WEBHOOK_SECRET_MAX_LENGTH = 1024;

export interface WebhookInput {
  url: string;
  events: readonly string[];
}

export function validateWebhookInput(input: WebhookInput): Violation[] {
  const violations: Violation[] = [];
  const urlProblem = webhookUrlProblem(input.url);
  if (urlProblem) violations.push({ property_path: 'url', message: urlProblem, code: 'webhook.url.format' });
  input.events.forEach((filter, index) => {
    const problem = eventFilterProblem(filter);
    if (problem) violations.push({ property_path: `events[${index}]`, message: problem, code: 'webhook.events.unknown' });
  });
  return violations;
}
