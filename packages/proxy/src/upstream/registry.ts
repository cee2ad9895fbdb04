// Upstream pools, one per entrypoint id: balancing state, passive and active health, kept across reloads.
import type { Backend, Entrypoint } from '../model/entrypoint.js';
import { backendKey } from './address.js';
import { affinityIndex, effectiveWeights, smoothWeightedPick, type BalancerPeer } from './balancer.js';
import type { BackendRef, FailureReason, UpstreamPool, UpstreamRegistry } from './contract.js';
import { createHealthCheckHub, resolveHealthCheck, type HealthCheckHub, type HealthSubscription, type Probe } from './health.js';

/** Consecutive `timeout`/`error` failures that take a backend out of the rotation (a `refused` one does at once). */
export const DEFAULT_PASSIVE_FAILURES = 3;
/** How long a passively failed backend stays out before it is tried again (nginx's fail_timeout). */
export const DEFAULT_PASSIVE_COOLDOWN_MS = 10_000;

export interface UpstreamRegistryOptions {
  /** Run active checks in this process (default true). Workers pass false and receive setHealthy() instead. */
  activeChecks?: boolean;
  now?: () => number;
  passiveFailures?: number;
  passiveCooldownMs?: number;
  probe?: Probe;
  random?: () => number;
}

type HealthListener = (entrypointId: string, key: string, healthy: boolean) => void;

interface BackendHealth {
  /** Verdict of the active checker (or of the primary process); true until told otherwise. */
  activeHealthy: boolean;
  failures: number;
  /** Passively out of the rotation until this time (ms, from `now`). */
  passiveDownUntil: number | null;
}

interface PoolSettings {
  now: () => number;
  passiveFailures: number;
  passiveCooldownMs: number;
  emit: HealthListener;
}

/** What decides whether a pool survives a reload: same id, same backends (any order), same health check. */
function poolSignature(entrypoint: Entrypoint): string {
  const backends = entrypoint.backends
    .map((b) => `${backendKey(b.address, b.port)}*${b.weight}`)
    .sort();
  return JSON.stringify([entrypoint.id, entrypoint.protocol, backends, entrypoint.config.health_check]);
}

function toRef(backend: Backend): BackendRef {
  return { address: backend.address, port: backend.port, weight: backend.weight, key: backendKey(backend.address, backend.port) };
}

class Pool implements UpstreamPool {
  readonly backends: readonly BackendRef[];
  private current: number[] = [];
  private readonly health: BackendHealth[];
  /** Last verdict reported to listeners, per backend index. */
  private readonly reported: boolean[];
  private subscriptions: HealthSubscription[] = [];
  private cooldownTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly entrypointId: string,
    readonly signature: string,
    backends: readonly Backend[],
    private readonly settings: PoolSettings,
    previous: Pool | undefined,
  ) {
    this.backends = Object.freeze(backends.map((b) => Object.freeze(toRef(b))));
    this.health = this.backends.map((b) => {
      const carried = previous?.healthOf(b.key);
      return carried ? { ...carried } : { activeHealthy: true, failures: 0, passiveDownUntil: null };
    });
    this.reported = this.health.map((_, i) => this.isHealthy(i));
    if (this.health.some((h) => h.passiveDownUntil !== null)) this.armCooldownTimer();
  }

  /**
   * Subscribes to the shared checker of each distinct backend. A checker that has already decided hands its
   * verdict over at once (another pool checks the same backend the same way); an unhealthy verdict this pool
   * carried over a reload seeds a checker that has not decided yet.
   */
  startChecks(entrypoint: Entrypoint, hub: HealthCheckHub): void {
    const config = resolveHealthCheck(entrypoint);
    if (config === null) return;
    const seen = new Set<string>();
    for (const [i, backend] of this.backends.entries()) {
      if (seen.has(backend.key)) continue;
      seen.add(backend.key);
      const known = this.health[i]?.activeHealthy === false ? false : undefined;
      const subscription = hub.subscribe(backend, config, (healthy) => this.setHealthy(backend.key, healthy), known);
      this.subscriptions.push(subscription);
      const verdict = subscription.verdict;
      if (verdict !== null) {
        // The shared verdict only; passive state is this pool's own and stays as it is.
        this.forEachIndex(backend.key, (h) => {
          h.activeHealthy = verdict;
        });
      }
    }
    this.settle();
  }

  healthOf(key: string): BackendHealth | undefined {
    const index = this.backends.findIndex((b) => b.key === key);
    return index < 0 ? undefined : this.health[index];
  }

  pick(affinityKey?: string | null, exclude?: ReadonlySet<string>): BackendRef | null {
    this.expireCooldowns();
    const peers: BalancerPeer[] = this.backends.map((b, i) => ({
      weight: b.weight,
      healthy: this.isHealthy(i),
      excluded: exclude?.has(b.key) ?? false,
    }));
    const weights = effectiveWeights(peers);
    if (affinityKey) {
      const pinned = affinityIndex(peers, weights, this.backends.findIndex((b) => b.key === affinityKey));
      if (pinned !== null) return this.backends[pinned] ?? null;
    }
    const selection = smoothWeightedPick(weights, this.current);
    if (selection === null) return null;
    this.current = selection.current;
    return this.backends[selection.index] ?? null;
  }

  reportFailure(backend: BackendRef, reason: FailureReason = 'error'): void {
    const now = this.settings.now();
    this.forEachIndex(backend.key, (h) => {
      h.failures += 1;
      if (reason === 'refused' || h.failures >= this.settings.passiveFailures) {
        h.passiveDownUntil = now + this.settings.passiveCooldownMs;
      }
    });
    this.armCooldownTimer();
    this.settle();
  }

  reportSuccess(backend: BackendRef): void {
    this.forEachIndex(backend.key, (h) => {
      h.failures = 0;
      h.passiveDownUntil = null;
    });
    this.settle();
  }

  setHealthy(key: string, healthy: boolean): void {
    this.forEachIndex(key, (h) => {
      h.activeHealthy = healthy;
      // A passing active check proves the backend answers again: it need not sit out its passive cool-down.
      if (healthy) {
        h.failures = 0;
        h.passiveDownUntil = null;
      }
    });
    this.settle();
  }

  unhealthy(): string[] {
    this.expireCooldowns();
    const keys = this.backends.filter((_, i) => !this.isHealthy(i)).map((b) => b.key);
    return [...new Set(keys)];
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    this.subscriptions = [];
    if (this.cooldownTimer) clearTimeout(this.cooldownTimer);
    this.cooldownTimer = null;
  }

  private isHealthy(index: number): boolean {
    const h = this.health[index];
    return h === undefined || (h.activeHealthy && h.passiveDownUntil === null);
  }

  private forEachIndex(key: string, apply: (health: BackendHealth) => void): void {
    this.backends.forEach((b, i) => {
      const h = this.health[i];
      if (b.key === key && h) apply(h);
    });
  }

  /** A backend back from its cool-down gets one chance: a single further failure takes it out again. */
  private expireCooldowns(): void {
    const now = this.settings.now();
    let changed = false;
    for (const h of this.health) {
      if (h.passiveDownUntil !== null && h.passiveDownUntil <= now) {
        h.passiveDownUntil = null;
        h.failures = Math.max(0, this.settings.passiveFailures - 1);
        changed = true;
      }
    }
    if (changed) this.settle();
  }

  private armCooldownTimer(): void {
    const now = this.settings.now();
    const until = this.health.reduce<number | null>(
      (soonest, h) => (h.passiveDownUntil !== null && (soonest === null || h.passiveDownUntil < soonest) ? h.passiveDownUntil : soonest),
      null,
    );
    if (this.cooldownTimer) clearTimeout(this.cooldownTimer);
    this.cooldownTimer = null;
    if (until === null) return;
    // Real time drives the notification; the injected clock decides (lazily) whether the cool-down is over.
    this.cooldownTimer = setTimeout(() => {
      this.cooldownTimer = null;
      this.expireCooldowns();
      this.armCooldownTimer();
    }, Math.max(1, until - now));
    this.cooldownTimer.unref();
  }

  /** Reports every verdict that changed since the last report. */
  private settle(): void {
    this.backends.forEach((b, i) => {
      const healthy = this.isHealthy(i);
      if (this.reported[i] !== healthy) {
        this.reported[i] = healthy;
        this.settings.emit(this.entrypointId, b.key, healthy);
      }
    });
  }
}

export function createUpstreamRegistry(options: UpstreamRegistryOptions = {}): UpstreamRegistry {
  const hub = options.activeChecks ?? true ? createHealthCheckHub({ probe: options.probe, random: options.random }) : null;
  const listeners: HealthListener[] = [];
  const settings: PoolSettings = {
    now: options.now ?? Date.now,
    passiveFailures: Math.max(1, Math.floor(options.passiveFailures ?? DEFAULT_PASSIVE_FAILURES)),
    passiveCooldownMs: Math.max(1, options.passiveCooldownMs ?? DEFAULT_PASSIVE_COOLDOWN_MS),
    emit: (entrypointId, key, healthy) => {
      for (const listener of listeners) {
        try {
          listener(entrypointId, key, healthy);
        } catch {
          // A faulty listener must not break health tracking for the others.
        }
      }
    },
  };
  let pools = new Map<string, Pool>();

  return {
    sync(entrypoints) {
      const next = new Map<string, Pool>();
      for (const entrypoint of entrypoints) {
        if (next.has(entrypoint.id)) continue;
        const signature = poolSignature(entrypoint);
        const existing = pools.get(entrypoint.id);
        if (existing && existing.signature === signature) {
          next.set(entrypoint.id, existing);
          continue;
        }
        const pool = new Pool(entrypoint.id, signature, entrypoint.backends, settings, existing);
        if (hub !== null) pool.startChecks(entrypoint, hub);
        next.set(entrypoint.id, pool);
      }
      for (const [id, pool] of pools) {
        if (next.get(id) !== pool) pool.stop();
      }
      pools = next;
      return pools;
    },
    get(entrypointId) {
      return pools.get(entrypointId);
    },
    onHealthChange(listener) {
      listeners.push(listener);
    },
    stop() {
      for (const pool of pools.values()) pool.stop();
      pools = new Map();
    },
  };
}
