// The boundary between the data plane (HTTP, TCP and UDP forwarding) and upstream selection and health.
// The data plane asks a pool for a backend per request or connection; the pool balances across healthy
// backends and learns from passive failures; the health checker drives active checks.
import type { Entrypoint, HealthCheckConfig } from '../model/entrypoint.js';

export interface BackendRef {
  address: string;
  port: number;
  weight: number;
  /** `address:port` (IPv6 addresses in brackets), the form shown in `unhealthy_backends`. */
  key: string;
}

/**
 * Why a connection to a backend failed. `refused` (nothing listens: ECONNREFUSED) marks the backend passively
 * unhealthy at once; `timeout` and `error` count towards the consecutive-failure threshold.
 */
export type FailureReason = 'refused' | 'timeout' | 'error';

/** The FailureReason of a socket error, by its code (ETIMEDOUT is a timeout, whoever raised it). */
export function failureReason(error: unknown): FailureReason {
  const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ETIMEDOUT') return 'timeout';
  return 'error';
}

export interface UpstreamPool {
  readonly entrypointId: string;
  readonly backends: readonly BackendRef[];
  /**
   * Next backend by smooth weighted round robin over the healthy backends. While at least one backend is
   * healthy, unhealthy ones are never returned; when none is healthy, balances over all of them (fail open).
   * `affinityKey` is a backend key (from a sticky cookie or a UDP flow); honoured while that backend is healthy.
   * `exclude` holds keys already tried for this request or connection (retries): never returned, not even when
   * failing open; null when every backend is excluded.
   */
  pick(affinityKey?: string | null, exclude?: ReadonlySet<string>): BackendRef | null;
  /** Passive health: a connection error or timeout to this backend (reason defaults to `error`). */
  reportFailure(backend: BackendRef, reason?: FailureReason): void;
  reportSuccess(backend: BackendRef): void;
  /** Set by the active health checker (or by a primary process pushing its view to workers). */
  setHealthy(key: string, healthy: boolean): void;
  /** Keys of the backends currently unhealthy. */
  unhealthy(): string[];
}

export interface UpstreamRegistry {
  /**
   * Pools for a new entrypoint set. A pool whose entrypoint id, backends and health-check config are unchanged
   * is the same object as before (balancer position and health survive a reload); others are created, and pools
   * of removed entrypoints are stopped.
   */
  sync(entrypoints: readonly Entrypoint[]): ReadonlyMap<string, UpstreamPool>;
  get(entrypointId: string): UpstreamPool | undefined;
  /** Called on every health transition (active or passive). */
  onHealthChange(listener: (entrypointId: string, key: string, healthy: boolean) => void): void;
  stop(): void;
}

export type { HealthCheckConfig };
