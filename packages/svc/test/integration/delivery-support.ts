// Shared by the delivery tests: enqueue events into a running server's database exactly as the status-change
// path does (store/outbox.ts enqueueEvent, from another connection), create webhooks through the API, and poll
// the deliveries endpoint.
import { openDatabase } from '../../src/store/db.js';
import { enqueueEvent } from '../../src/store/outbox.js';
import { webhookEvent, type WebhookEvent } from '../../src/domain/events.js';
import type { TestServer } from '../support/server.js';

export const FAST_DELIVERY_ENV = {
  SVC_WEBHOOK_MAX_ATTEMPTS: '3',
  SVC_WEBHOOK_BACKOFF_BASE_MS: '100',
  SVC_WEBHOOK_BACKOFF_MAX_MS: '300',
  SVC_WEBHOOK_TIMEOUT_MS: '1000',
};

export interface CreatedWebhook {
  id: string;
  url: string;
  events: string[];
  secret: string;
}

export interface DeliveryView {
  id: string;
  event_id: string;
  webhook_id: string;
  event: string;
  status: string;
  attempts: number;
  last_error: string | null;
  created_at: string;
  next_attempt_at: string | null;
  delivered_at: string | null;
  payload: unknown;
}

let deployments = 0;

export function statusChanged(name = `web-${++deployments}`): WebhookEvent {
  return webhookEvent(
    'deployment.status_changed',
    { id: `00000000-0000-4000-8000-${String(deployments).padStart(12, '0')}`, namespace: 'prod', name, kind: 'worker' },
    { old_status: 'creating', new_status: 'running', restart_count: 0 },
  );
}

export function scaled(): WebhookEvent {
  return webhookEvent('deployment.scaled', { id: 'd-scaled', namespace: 'prod', name: 'api', kind: 'worker' }, { direction: 'up', instance_count: 2, replicas: 2 });
}

/** Enqueues through a second connection to the server's database file; returns the event ids. */
export function enqueue(server: TestServer, events: readonly WebhookEvent[]): string[] {
  const db = openDatabase(server.dbPath);
  try {
    return db.transaction(() => events.map((event) => enqueueEvent(db, event).eventId))();
  } finally {
    db.close();
  }
}

export async function createWebhook(server: TestServer, url: string, events: string[] = [], secret?: string): Promise<CreatedWebhook> {
  const response = await server.request<CreatedWebhook>('POST', '/webhooks', { body: { url, events, ...(secret ? { secret } : {}) } });
  if (response.status !== 201) throw new Error(`webhook creation failed: ${response.status} ${response.text}`);
  return response.body;
}

export async function deliveries(server: TestServer, webhookId: string, status: string): Promise<DeliveryView[]> {
  const response = await server.request<DeliveryView[]>('GET', `/webhooks/${webhookId}/deliveries?status=${status}`);
  if (response.status !== 200) throw new Error(`list deliveries failed: ${response.status} ${response.text}`);
  return response.body;
}

export async function waitUntil<T>(what: string, timeoutMs: number, probe: () => Promise<T | null | undefined | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function eventsByStatus(server: TestServer): Promise<Record<string, number>> {
  const response = await server.request('GET', '/metrics', { token: null });
  const counts: Record<string, number> = {};
  for (const match of response.text.matchAll(/^svc_events_by_status\{status="([a-z]+)"\} ([0-9.e+]+)$/gm)) {
    counts[match[1] ?? ''] = Number(match[2]);
  }
  return counts;
}

export async function sleep(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}
