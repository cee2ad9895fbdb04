// How one check's health on one instance evolves with each probe result: the single place that defines the
// streak the plan reads (CheckHealth). Pure. The prober folds results in as they come; a restarted server
// rebuilds the same state from stored results (oldest first).
import type { CheckHealth, ProbeStatus } from './plan.js';

export const UNPROBED: CheckHealth = {
  lastStatus: null,
  consecutiveFailures: 0,
  everSucceeded: false,
  handled: false,
  lastMessage: null,
};

/** The state after one more probe result. A success ends the failure streak and re-arms `alert`. */
export function recordProbe(previous: CheckHealth | undefined, status: ProbeStatus, message: string | null): CheckHealth {
  const before = previous ?? UNPROBED;
  if (status === 'success') {
    return { lastStatus: status, consecutiveFailures: 0, everSucceeded: true, handled: false, lastMessage: message };
  }
  return {
    lastStatus: status,
    consecutiveFailures: before.consecutiveFailures + 1,
    everSucceeded: before.everSucceeded,
    handled: before.handled,
    lastMessage: message,
  };
}

/**
 * Rebuilds the state from stored results, oldest first. `handled` is not stored, so after a restart an `alert`
 * whose streak is still going may fire once more: an extra alert is better than a lost one.
 */
export function rebuildCheckHealth(results: readonly { status: ProbeStatus; message: string | null }[]): CheckHealth {
  return results.reduce<CheckHealth>((state, result) => recordProbe(state, result.status, result.message), UNPROBED);
}
