// Docker event messages → RuntimeEvent, and the bookkeeping that lets a reconnect replay what was missed
// without delivering an event twice. Pure.

import type { RuntimeEvent } from '../runtime.js';
import { LABEL_DEPLOYMENT } from './container-config.js';

export const WATCHED_ACTIONS = ['start', 'die', 'destroy', 'oom'] as const;

export interface DockerEventKey {
  /** Nanoseconds since the epoch, as a decimal string (exceeds Number precision). */
  timeNano: bigint;
  key: string;
}

function attributes(message: Record<string, unknown>): Record<string, unknown> {
  const actor = message['Actor'];
  if (typeof actor !== 'object' || actor === null) return {};
  const attrs = (actor as Record<string, unknown>)['Attributes'];
  return typeof attrs === 'object' && attrs !== null ? (attrs as Record<string, unknown>) : {};
}

/** One decoded event message → a RuntimeEvent for an svc container, or null for anything else. */
export function toRuntimeEvent(message: unknown): RuntimeEvent | null {
  if (typeof message !== 'object' || message === null) return null;
  const record = message as Record<string, unknown>;
  if (record['Type'] !== 'container') return null;
  const attrs = attributes(record);
  const deploymentId = attrs[LABEL_DEPLOYMENT];
  const instanceId = typeof record['id'] === 'string' ? record['id'] : (record['Actor'] as Record<string, unknown> | undefined)?.['ID'];
  if (typeof deploymentId !== 'string' || typeof instanceId !== 'string') return null;
  const rawAction = typeof record['Action'] === 'string' ? record['Action'] : '';
  const action = (WATCHED_ACTIONS as readonly string[]).includes(rawAction) ? (rawAction as RuntimeEvent['action']) : 'other';
  const exitCodeText = attrs['exitCode'];
  const exitCode = action === 'die' && typeof exitCodeText === 'string' && /^-?\d+$/.test(exitCodeText) ? Number(exitCodeText) : null;
  return { deploymentId, instanceId, action, exitCode };
}

/** Identity of one event message, for de-duplication across reconnects; null when it has no time. */
export function eventKey(message: unknown): DockerEventKey | null {
  if (typeof message !== 'object' || message === null) return null;
  const record = message as Record<string, unknown>;
  const timeNano = record['timeNano'];
  if (typeof timeNano !== 'number' && typeof timeNano !== 'string') return null;
  let nanos: bigint;
  try {
    nanos = BigInt(typeof timeNano === 'number' ? Math.trunc(timeNano) : timeNano);
  } catch {
    return null;
  }
  const actor = record['Actor'];
  const id = typeof actor === 'object' && actor !== null ? String((actor as Record<string, unknown>)['ID'] ?? '') : '';
  return { timeNano: nanos, key: `${String(record['Action'] ?? '')}:${id}` };
}

/**
 * Remembers the newest event time and the events seen at that time, so a stream reopened with `since=<seconds>`
 * (which replays from the start of that second) skips what was already delivered.
 */
export class EventCursor {
  private latest = 0n;
  private seenAtLatest = new Set<string>();
  /** A reopened stream must not report events older than the moment the consumer started listening. */
  constructor(private readonly startedAtNanos: bigint) {}

  /** True the first time an event is offered; false for a replayed duplicate or one from before the start. */
  accept(event: DockerEventKey): boolean {
    if (event.timeNano < this.startedAtNanos) return false;
    if (event.timeNano < this.latest) return false;
    if (event.timeNano === this.latest) {
      if (this.seenAtLatest.has(event.key)) return false;
      this.seenAtLatest.add(event.key);
      return true;
    }
    this.latest = event.timeNano;
    this.seenAtLatest = new Set([event.key]);
    return true;
  }

  /** Whole seconds to pass as `since` when reconnecting. */
  sinceSeconds(): number {
    const reference = this.latest > this.startedAtNanos ? this.latest : this.startedAtNanos;
    return Number(reference / 1_000_000_000n);
  }
}
