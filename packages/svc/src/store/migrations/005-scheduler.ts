// What the scheduler persists per deployment beside the status and restart count (scheduler/plan.ts
// SchedulerState), so a restarted server resumes backoffs and readiness deadlines instead of starting over,
// and whether the deployment was applied with `force=true` (a rolling update that replaces at once).
// Health streaks are not stored here: they are rebuilt from health_check_results on start.
import type { Migration } from './types.js';

export const SCHEDULER_MIGRATIONS: readonly Migration[] = [
  {
    id: '005_scheduler',
    up: `
      ALTER TABLE deployments ADD COLUMN retry_count INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE deployments ADD COLUMN status_since INTEGER;
      ALTER TABLE deployments ADD COLUMN backoff_until INTEGER;
      ALTER TABLE deployments ADD COLUMN force INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX deployments_parent ON deployments (parent_id);
      CREATE INDEX health_check_results_by_instance ON health_check_results (instance_id, check_index, created_at);
    `,
  },
];
