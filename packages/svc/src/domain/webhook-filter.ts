// Webhook event kinds and filters (spec "Events" and "Webhooks"). A filter is an exact kind, the family
// wildcard `deployment.*`, or `*`; an empty filter list subscribes to every kind. Pure: used when a webhook is
// created (validation) and whenever an event is enqueued (matching). The kinds themselves are defined once, in
// domain/events.ts.
import { WEBHOOK_EVENT_KINDS, isWebhookEventKind, type WebhookEventKind } from './events.js';

/** Families are the part before the dot; today there is one. */
export const EVENT_FAMILIES: readonly string[] = [...new Set(WEBHOOK_EVENT_KINDS.map((kind) => kind.slice(0, kind.indexOf('.'))))];

/** Why a filter is malformed, or null when it is valid. Matching is case-sensitive, like the kinds. */
export function eventFilterProblem(filter: string): string | null {
  if (filter === '*') return null;
  const dot = filter.indexOf('.');
  if (dot < 0) return `'${clip(filter)}' is not an event kind: expected <family>.<event>, <family>.* or *`;
  const family = filter.slice(0, dot);
  if (!EVENT_FAMILIES.includes(family)) return `'${clip(filter)}' names an unknown event family (known: ${EVENT_FAMILIES.join(', ')})`;
  if (filter === `${family}.*` || isWebhookEventKind(filter)) return null;
  return `'${clip(filter)}' is not a known event kind (known: ${WEBHOOK_EVENT_KINDS.join(', ')})`;
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

export function filterMatches(filter: string, kind: WebhookEventKind): boolean {
  if (filter === '*' || filter === kind) return true;
  return filter.endsWith('.*') && kind.startsWith(filter.slice(0, -1));
}

/** An empty list means every kind. */
export function filtersMatch(filters: readonly string[], kind: WebhookEventKind): boolean {
  return filters.length === 0 || filters.some((filter) => filterMatches(filter, kind));
}
