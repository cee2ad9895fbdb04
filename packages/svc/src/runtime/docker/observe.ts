// Docker's view of a container → ObservedInstance. Pure. The list endpoint lacks start/finish times, so those
// come from a per-container inspect that the runtime caches by (id, state): in the steady state one list call
// per scheduler tick is all it costs.

import type { InstanceState, ObservedInstance } from '../runtime.js';
import { LABEL_DEPLOYMENT, LABEL_NAMESPACE, LABEL_SPEC_HASH, namespaceNetworkName } from './container-config.js';

/** The fields of a `GET /containers/json` entry this module reads (a subset of dockerode's ContainerInfo). */
export interface ListedContainer {
  Id: string;
  Names: string[];
  ImageID: string;
  Labels: Record<string, string>;
  State: string;
  Status: string;
  HostConfig: { NetworkMode: string };
  NetworkSettings: { Networks: Record<string, { IPAddress?: string } | undefined> };
}

/** What only an inspect knows. */
export interface InspectedTimes {
  startedAt: string | null;
  finishedAt: string | null;
  exitCode: number | null;
}

const KNOWN_STATES: readonly InstanceState[] = ['created', 'running', 'restarting', 'paused', 'exited', 'dead', 'removing'];

/** The address probes and the proxy use from the host when the container shares the host's network. */
export const HOST_NETWORK_ADDRESS = '127.0.0.1';

export function toInstanceState(state: string): InstanceState {
  const lower = state.toLowerCase();
  return (KNOWN_STATES as readonly string[]).includes(lower) ? (lower as InstanceState) : 'dead';
}

/** Docker writes `0001-01-01T00:00:00Z` for "never"; that becomes null. */
export function dockerTime(value: string | undefined | null): string | null {
  if (value === undefined || value === null || value === '' || value.startsWith('0001-01-01')) return null;
  return value;
}

/** The exit code inside a list Status such as `Exited (137) 5 seconds ago`. */
export function exitCodeFromStatus(status: string): number | null {
  const match = /^Exited \((-?\d+)\)/.exec(status);
  return match === null ? null : Number(match[1]);
}

export function containerAddress(container: ListedContainer): string | null {
  if (container.HostConfig.NetworkMode === 'host') return HOST_NETWORK_ADDRESS;
  const namespace = container.Labels[LABEL_NAMESPACE];
  if (namespace === undefined) return null;
  const ip = container.NetworkSettings.Networks[namespaceNetworkName(namespace)]?.IPAddress;
  return ip === undefined || ip === '' ? null : ip;
}

export function toObservedInstance(container: ListedContainer, times: InspectedTimes | null): ObservedInstance {
  const state = toInstanceState(container.State);
  const finished = state === 'exited' || state === 'dead';
  const name = (container.Names[0] ?? '').replace(/^\//, '');
  return {
    id: container.Id,
    name,
    deploymentId: container.Labels[LABEL_DEPLOYMENT] ?? '',
    specHash: container.Labels[LABEL_SPEC_HASH] ?? '',
    state,
    exitCode: finished ? (times?.exitCode ?? exitCodeFromStatus(container.Status)) : null,
    startedAt: times?.startedAt ?? null,
    finishedAt: finished ? (times?.finishedAt ?? null) : null,
    address: state === 'running' ? containerAddress(container) : null,
    imageDigest: container.ImageID.startsWith('sha256:') ? container.ImageID : null,
  };
}

/**
 * Nanoseconds since the epoch of a Docker RFC 3339 time. Docker trims trailing zeros of the fraction
 * (`…09.12Z` vs `…09.123Z`), so these strings do not sort as text; null when unparsable.
 */
export function dockerTimeNanos(value: string): bigint | null {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/.exec(value);
  if (match === null) return null;
  const seconds = Date.parse(`${match[1] ?? ''}${match[3] ?? 'Z'}`);
  if (Number.isNaN(seconds)) return null;
  return BigInt(seconds) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0'));
}

/** Oldest first; ties (and unparsable times) broken by id so every caller picks the same first entry. */
export function compareByCreation(a: { Created: string; Id: string }, b: { Created: string; Id: string }): number {
  const left = dockerTimeNanos(a.Created);
  const right = dockerTimeNanos(b.Created);
  if (left !== null && right !== null && left !== right) return left < right ? -1 : 1;
  return a.Id.localeCompare(b.Id);
}
