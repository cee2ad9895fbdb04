// Health streaks per instance and check, as the plan reads them (scheduler/plan.ts InstanceHealth). Kept in
// memory, fed by probe results through scheduler/health-state.ts (the one definition of a streak), and rebuilt
// from health_check_results when the server starts, so a restart neither forgets that a check passed nor resets
// a failure streak.
import { UNPROBED, rebuildCheckHealth, recordProbe } from '../scheduler/health-state.js';
import type { CheckHealth, InstanceHealth, ProbeStatus } from '../scheduler/plan.js';

export interface StoredResult {
  instance_id: string;
  check_index: number;
  status: ProbeStatus;
  message: string | null;
}

export class HealthTracker {
  private readonly instances = new Map<string, CheckHealth[]>();

  private checksOf(instanceId: string): CheckHealth[] {
    let checks = this.instances.get(instanceId);
    if (checks === undefined) {
      checks = [];
      this.instances.set(instanceId, checks);
    }
    return checks;
  }

  private set(instanceId: string, index: number, state: CheckHealth): void {
    const checks = this.checksOf(instanceId);
    while (checks.length < index) checks.push(UNPROBED);
    checks[index] = state;
  }

  /**
   * Applies one probe result. Returns true when the plan may decide differently now (the check's verdict flipped,
   * or a failure streak grew on a check that had passed before), so the caller wakes the loop.
   */
  record(instanceId: string, index: number, status: ProbeStatus, message: string | null): boolean {
    const before = this.instances.get(instanceId)?.[index];
    const after = recordProbe(before, status, message);
    this.set(instanceId, index, after);
    const flipped = (before?.lastStatus === 'success') !== (status === 'success');
    return flipped || (status !== 'success' && after.everSucceeded && !after.handled);
  }

  /** `on_failure: alert` fired for the current failure streak (the plan's ackHealth action). */
  ack(instanceId: string, index: number): void {
    const before = this.instances.get(instanceId)?.[index] ?? UNPROBED;
    this.set(instanceId, index, { ...before, handled: true });
  }

  /** Forgets instances that no longer exist. */
  retain(instanceIds: ReadonlySet<string>): void {
    for (const id of this.instances.keys()) if (!instanceIds.has(id)) this.instances.delete(id);
  }

  snapshot(): InstanceHealth[] {
    return [...this.instances].map(([instanceId, checks]) => ({ instanceId, checks: [...checks] }));
  }

  /**
   * Rebuilds streaks from stored results given NEWEST FIRST per (instance, check), as store
   * recentHealthResults returns them. Only the rows read count: a check whose last success is older than that
   * window starts as never passed (the readiness gate then governs it again).
   */
  static fromStored(rows: readonly StoredResult[]): HealthTracker {
    const tracker = new HealthTracker();
    const groups = new Map<string, StoredResult[]>();
    for (const row of rows) {
      const key = `${row.instance_id}\u0000${row.check_index}`;
      const group = groups.get(key);
      if (group === undefined) groups.set(key, [row]);
      else group.push(row);
    }
    for (const group of groups.values()) {
      const first = group[0];
      if (first === undefined) continue;
      tracker.set(first.instance_id, first.check_index, rebuildCheckHealth([...group].reverse()));
    }
    return tracker;
  }
}
