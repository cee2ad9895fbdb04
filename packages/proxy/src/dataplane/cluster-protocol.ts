// Messages between the primary and its worker processes (node:cluster IPC). Both ends are this code base, yet
// messages are checked on arrival: a malformed one is ignored rather than trusted.
import type { Entrypoint } from '../model/entrypoint.js';
import type { DataPlaneOptions } from '../model/dataplane-contract.js';
import type { BoundAddresses } from './local.js';

export type HealthEntry = [entrypointId: string, key: string, healthy: boolean];

export type ToWorker =
  | { t: 'svc-proxy:init'; options: DataPlaneOptions; entrypoints: Entrypoint[]; health: HealthEntry[] }
  | { t: 'svc-proxy:update'; entrypoints: Entrypoint[] }
  | { t: 'svc-proxy:health'; health: HealthEntry[] }
  | { t: 'svc-proxy:metrics'; seq: number }
  | { t: 'svc-proxy:stop' };

export type FromWorker =
  | { t: 'svc-proxy:hello' }
  | { t: 'svc-proxy:ready'; addresses: BoundAddresses }
  | { t: 'svc-proxy:failed'; message: string }
  | { t: 'svc-proxy:metrics'; seq: number; data: object[] }
  /** The worker's own verdict changes (passive ones included), so the primary's API can report them. */
  | { t: 'svc-proxy:verdicts'; health: HealthEntry[] }
  | { t: 'svc-proxy:stopped' };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function isHealthEntry(v: unknown): v is HealthEntry {
  return Array.isArray(v) && v.length === 3 && typeof v[0] === 'string' && typeof v[1] === 'string' && typeof v[2] === 'boolean';
}

export function asToWorker(v: unknown): ToWorker | null {
  if (!isRecord(v) || typeof v['t'] !== 'string') return null;
  switch (v['t']) {
    case 'svc-proxy:init':
      return isRecord(v['options']) && Array.isArray(v['entrypoints']) && Array.isArray(v['health']) ? (v as ToWorker) : null;
    case 'svc-proxy:update':
      return Array.isArray(v['entrypoints']) ? (v as ToWorker) : null;
    case 'svc-proxy:health':
      return Array.isArray(v['health']) ? (v as ToWorker) : null;
    case 'svc-proxy:metrics':
      return typeof v['seq'] === 'number' ? (v as ToWorker) : null;
    case 'svc-proxy:stop':
      return { t: 'svc-proxy:stop' };
    default:
      return null;
  }
}

export function asFromWorker(v: unknown): FromWorker | null {
  if (!isRecord(v) || typeof v['t'] !== 'string') return null;
  switch (v['t']) {
    case 'svc-proxy:hello':
      return { t: 'svc-proxy:hello' };
    case 'svc-proxy:ready':
      return isRecord(v['addresses']) ? (v as FromWorker) : null;
    case 'svc-proxy:failed':
      return typeof v['message'] === 'string' ? (v as FromWorker) : null;
    case 'svc-proxy:metrics':
      return typeof v['seq'] === 'number' && Array.isArray(v['data']) ? (v as FromWorker) : null;
    case 'svc-proxy:verdicts': {
      const health = v['health'];
      return Array.isArray(health) && health.every(isHealthEntry) ? { t: 'svc-proxy:verdicts', health } : null;
    }
    case 'svc-proxy:stopped':
      return { t: 'svc-proxy:stopped' };
    default:
      return null;
  }
}
