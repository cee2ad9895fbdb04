// Namespaces, secrets, volumes, configs, webhooks, and the webhook outbox. Owned by the resources area.
//
// Resources name their namespace by name (the natural key every API body and deployment spec uses) with a
// foreign key, so a namespace that still holds resources cannot disappear underneath them.
// The outbox is two tables: `events` (one row per event, payload = the exact webhook body) and
// `event_deliveries` (one row per event and subscriber), so a subscriber that already received an event is
// never sent it again because another subscriber failed.
import type { Migration } from './types.js';

export const RESOURCE_MIGRATIONS: readonly Migration[] = [
  {
    id: '002_resources',
    up: `
      CREATE TABLE namespaces (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        updated_at TEXT
      );
      CREATE TABLE secrets (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL REFERENCES namespaces (name) ON UPDATE RESTRICT ON DELETE RESTRICT,
        name TEXT NOT NULL,
        sealed_value BLOB NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT,
        UNIQUE (namespace, name)
      );
      CREATE TABLE volumes (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL REFERENCES namespaces (name) ON UPDATE RESTRICT ON DELETE RESTRICT,
        name TEXT NOT NULL,
        backend_type TEXT NOT NULL CHECK (backend_type IN ('local', 'directory')),
        size INTEGER,
        labels TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT,
        UNIQUE (namespace, name)
      );
      CREATE TABLE configs (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL REFERENCES namespaces (name) ON UPDATE RESTRICT ON DELETE RESTRICT,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        labels TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT,
        UNIQUE (namespace, name)
      );
      CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        url TEXT NOT NULL,
        events TEXT NOT NULL DEFAULT '[]',
        sealed_secret BLOB NOT NULL,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX webhooks_active ON webhooks (revoked_at);
      CREATE TABLE events (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        deployment_id TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE INDEX events_by_created_at ON events (created_at);
      CREATE TABLE event_deliveries (
        event_id TEXT NOT NULL REFERENCES events (id) ON DELETE CASCADE,
        webhook_id TEXT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at TEXT NOT NULL,
        last_error TEXT,
        delivered_at TEXT,
        PRIMARY KEY (event_id, webhook_id)
      ) WITHOUT ROWID;
      -- Serves the due-queue scan (status = 'pending' ORDER BY next_attempt_at) and the per-status counts.
      CREATE INDEX event_deliveries_queue ON event_deliveries (status, next_attempt_at);
      CREATE INDEX event_deliveries_by_webhook ON event_deliveries (webhook_id);
    `,
  },
];
