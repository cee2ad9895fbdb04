// What the API needs from the running scheduler, and nothing more: wake it after a change, read the latest
// observation without calling the runtime, and reach a runtime for logs, stats and exec.
import type { ObservedInstance, Runtime, RuntimeName } from '../runtime/runtime.js';

export interface SchedulerHandle {
  /** Wakes the reconcile loop now (a deployment was created, updated or deleted). */
  nudge(): void;
  /** Instances of a deployment as of the latest observation (one runtime list call per tick). */
  instancesOf(deploymentId: string): readonly ObservedInstance[];
  /** The runtime serving `name`, or undefined when that runtime is not enabled on this server. */
  runtime(name: RuntimeName): Runtime | undefined;
}

/** For a server started without a scheduler (tests of the API alone): nothing runs, nothing is observed. */
export function idleScheduler(): SchedulerHandle {
  return { nudge: () => undefined, instancesOf: () => [], runtime: () => undefined };
}
