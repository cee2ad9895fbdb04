// Deployments. `spec` is the validated DeploymentSpec as JSON: the referrer queries of secrets and volumes read
// it with json_each, so a reference can never disagree with the deployment that holds it.
import type { Migration } from './types.js';

export const DEPLOYMENT_MIGRATIONS: readonly Migration[] = [
  {
    id: '003_deployments',
    up: `
      CREATE TABLE deployments (
        id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        runtime TEXT NOT NULL,
        status TEXT NOT NULL,
        spec TEXT NOT NULL,
        restart_count INTEGER NOT NULL DEFAULT 0,
        parent_id TEXT,
        image_digest TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX deployments_namespace_name ON deployments (namespace, name);
      CREATE INDEX deployments_status ON deployments (status);
      CREATE TABLE deployment_events (
        id TEXT PRIMARY KEY,
        deployment_id TEXT NOT NULL,
        timestamp TEXT NOT NULL,
        level TEXT NOT NULL,
        component TEXT NOT NULL,
        reason TEXT NOT NULL,
        message TEXT NOT NULL
      );
      CREATE INDEX deployment_events_by_deployment ON deployment_events (deployment_id, timestamp);
      CREATE TABLE health_check_results (
        id TEXT PRIMARY KEY,
        deployment_id TEXT NOT NULL,
        instance_id TEXT NOT NULL,
        check_index INTEGER NOT NULL,
        check_type TEXT NOT NULL,
        status TEXT NOT NULL,
        message TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL
      );
      CREATE INDEX health_check_results_by_deployment ON health_check_results (deployment_id, created_at);
    `,
  },
];
