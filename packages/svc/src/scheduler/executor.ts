// The thin executor: applies the plan's actions. Store writes go in ONE transaction (a status and its
// `deployment.status_changed` event are never separated); runtime work (remove, create) is started as bounded
// background tasks tracked as in flight, so the pass that planned them returns at once and one slow image pull
// never holds up any other deployment. It decides nothing: every decision is scheduler/plan.ts.
import type { HealthTracker } from '../health/tracker.js';
import type { Db } from '../store/db.js';
import { appendEvent, saveSchedulerState } from '../store/deployments.js';
import { enqueueEvent } from '../store/outbox.js';
import type { Action } from './plan.js';

/** Applies the store-side actions (setStatus, emit, record) in one transaction, then the ackHealth ones. */
export function applyStoreActions(db: Db, tracker: HealthTracker, actions: readonly Action[], now: Date): void {
  const writes = actions.filter((a) => a.type === 'setStatus' || a.type === 'emit' || a.type === 'record');
  if (writes.length > 0) {
    db.transaction(() => {
      for (const action of writes) {
        if (action.type === 'setStatus') saveSchedulerState(db, action.deploymentId, action.state, now);
        else if (action.type === 'emit') enqueueEvent(db, action.event, now);
        else if (action.type === 'record') appendEvent(db, action.event, now);
      }
    })();
  }
  for (const action of actions) if (action.type === 'ackHealth') tracker.ack(action.instanceId, action.checkIndex);
}

/** A counting semaphore: at most `limit` tasks run at once, the rest wait in order. */
export class Bound {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active += 1;
    try {
      return await task();
    } finally {
      this.active -= 1;
      this.waiting.shift()?.();
    }
  }
}
