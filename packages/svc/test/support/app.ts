// An in-process app on a temp SQLite file, for tests that need the route table or a hook-level behaviour
// (e.g. a deliberately slow route for the 408 test). Integration tests of behaviour use support/server.ts.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../src/api/context.js';
import { defaultConfig, type SvcConfig } from '../../src/config/config-file.js';
import { createSecretBox } from '../../src/crypto/secret-box.js';
import { createStreamTickets } from '../../src/api/stream-tickets.js';
import { createMetricsRegistry } from '../../src/metrics/registry.js';
import { idleScheduler } from '../../src/scheduler/handle.js';
import { migrate, openDatabase } from '../../src/store/db.js';
import { buildApp, registeredRoutes, type AppOptions, type RouteInfo } from '../../src/server/app.js';

export interface TestApp {
  app: FastifyInstance;
  deps: ApiDeps;
  close(): Promise<void>;
}

export function createTestApp(options: { config?: SvcConfig; app?: Partial<AppOptions>; beforeRoutes?: (app: FastifyInstance) => void } = {}): TestApp {
  const dir = mkdtempSync(join(tmpdir(), 'svc-app-'));
  const db = openDatabase(join(dir, 'svc.db'));
  migrate(db);
  const deps: ApiDeps = {
    db,
    secretBox: createSecretBox(randomBytes(32)),
    config: options.config ?? defaultConfig(),
    now: () => new Date(),
    streamTickets: createStreamTickets(),
    metrics: createMetricsRegistry(),
    scheduler: idleScheduler(),
  };
  const app = buildApp(deps, { logLevel: false, ...options.app });
  return {
    app,
    deps,
    async close() {
      await app.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The route table of the real application (every module in api/routes.ts). */
export async function applicationRoutes(): Promise<RouteInfo[]> {
  const testApp = createTestApp();
  try {
    await testApp.app.ready();
    return [...registeredRoutes(testApp.app)];
  } finally {
    await testApp.close();
  }
}
