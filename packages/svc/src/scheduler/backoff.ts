// Delays the scheduler waits before trying again. Pure. Documented in docs/svc/scheduler.md.

/** Retried failure statuses (image_pull_back_off, ..., error): 10 s, 20 s, 40 s, ... capped at 5 min, forever. */
export const RETRY_BASE_MS = 10_000;
export const RETRY_CAP_MS = 300_000;

/** Unplanned worker exits: the replacement waits 1 s, 2 s, 4 s, 8 s (the 5th exit is crash_loop_back_off). */
export const RESTART_BASE_MS = 1_000;
export const RESTART_CAP_MS = 30_000;

function exponential(attempt: number, base: number, cap: number): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 30));
  return Math.min(cap, base * 2 ** exponent);
}

/** Wait after the `attempt`-th consecutive failed attempt (1-based). */
export function retryDelayMs(attempt: number): number {
  return exponential(attempt, RETRY_BASE_MS, RETRY_CAP_MS);
}

/** Wait before replacing a worker instance after its `restartCount`-th unplanned exit (1-based). */
export function restartDelayMs(restartCount: number): number {
  return exponential(restartCount, RESTART_BASE_MS, RESTART_CAP_MS);
}
