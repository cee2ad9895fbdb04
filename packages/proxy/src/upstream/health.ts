// Active health checks. The verdict logic (rise/fall) is a pure state machine; probes are thin socket adapters;
// the scheduler ties them together per pool and reports transitions through a callback only, so it can run in
// one (primary) process while the pools that act on the verdicts live in worker processes.
import { connect } from 'node:net';
import { request } from 'node:http';
import type { Entrypoint, HealthCheckConfig } from '../model/entrypoint.js';
import type { BackendRef } from './contract.js';

/**
 * Applied to Http and Tcp entrypoints without a `health_check`: a TCP connect every 2 s, 1 s timeout, 2 results
 * in a row to change state (HAProxy's inter/rise/fall spirit, quicker to notice a dead backend).
 */
export const DEFAULT_HEALTH_CHECK: Readonly<HealthCheckConfig> = Object.freeze({
  type: 'tcp',
  path: null,
  interval: 2000,
  timeout: 1000,
  rise: 2,
  fall: 2,
});

const MIN_INTERVAL_MS = 10;
const MAX_FIRST_CHECK_DELAY_MS = 1000;

/**
 * The check an entrypoint gets, or null for none. Udp entrypoints are only checked when configured explicitly:
 * a TCP connect says nothing about a UDP service. Values are clamped into a sane range (interval >= 10 ms,
 * timeout >= 1 ms, rise/fall >= 1) so a bad value cannot spin the event loop.
 */
export function resolveHealthCheck(entrypoint: Pick<Entrypoint, 'protocol' | 'config'>): HealthCheckConfig | null {
  const configured = entrypoint.config.health_check;
  if (configured === null) return entrypoint.protocol === 'Udp' ? null : { ...DEFAULT_HEALTH_CHECK };
  const whole = (value: number, min: number, fallback: number): number =>
    Number.isFinite(value) ? Math.max(min, Math.floor(value)) : fallback;
  return {
    type: configured.type === 'http' ? 'http' : 'tcp',
    path: configured.path,
    interval: whole(configured.interval, MIN_INTERVAL_MS, DEFAULT_HEALTH_CHECK.interval),
    timeout: whole(configured.timeout, 1, DEFAULT_HEALTH_CHECK.timeout),
    rise: whole(configured.rise, 1, DEFAULT_HEALTH_CHECK.rise),
    fall: whole(configured.fall, 1, DEFAULT_HEALTH_CHECK.fall),
  };
}

export interface CheckState {
  healthy: boolean;
  /** False until the first result: that one is decisive, so a dead backend leaves the rotation at once. */
  checked: boolean;
  /** Consecutive results contradicting `healthy`. */
  streak: number;
}

export const UNCHECKED: Readonly<CheckState> = Object.freeze({ healthy: true, checked: false, streak: 0 });

/** Pure rise/fall: `fall` failures in a row turn a healthy backend unhealthy, `rise` successes turn it back. */
export function nextCheckState(state: CheckState, ok: boolean, config: Pick<HealthCheckConfig, 'rise' | 'fall'>): CheckState {
  if (!state.checked) return { healthy: ok, checked: true, streak: 0 };
  if (ok === state.healthy) return { healthy: ok, checked: true, streak: 0 };
  const streak = state.streak + 1;
  const needed = state.healthy ? config.fall : config.rise;
  return streak >= needed ? { healthy: ok, checked: true, streak: 0 } : { healthy: state.healthy, checked: true, streak };
}

/** Resolves true when the backend passes; never rejects; settles within `config.timeout`. */
export type Probe = (backend: BackendRef, config: HealthCheckConfig) => Promise<boolean>;

export const tcpProbe: Probe = (backend, config) =>
  new Promise((resolve) => {
    const socket = connect({ host: backend.address, port: backend.port });
    const finish = (ok: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), config.timeout);
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });

/** GET `path` (default `/`); 2xx and 3xx pass. The body is not read. */
export const httpProbe: Probe = (backend, config) =>
  new Promise((resolve) => {
    let settled = false;
    const req = request({
      host: backend.address,
      port: backend.port,
      path: config.path !== null && config.path.startsWith('/') ? config.path : '/',
      method: 'GET',
      agent: false,
      headers: { host: backend.key, 'user-agent': 'svc-proxy-health-check', connection: 'close' },
    });
    const finish = (ok: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), config.timeout);
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      finish(status >= 200 && status < 400);
    });
    req.once('error', () => finish(false));
    req.end();
  });

export const defaultProbe: Probe = (backend, config) =>
  config.type === 'http' ? httpProbe(backend, config) : tcpProbe(backend, config);

export interface ActiveCheckOptions {
  probe?: Probe;
  /** [0, 1); spreads the first checks. */
  random?: () => number;
  /** Known verdicts by backend key (a pool rebuilt on reload keeps its backends' health). */
  initial?: ReadonlyMap<string, boolean>;
}

export interface ActiveChecks {
  stop(): void;
}

/**
 * The check chain of one backend: the first check after a random delay below min(interval, 1 s), then one every
 * `interval` measured from the start of the previous one, never two at once. `onTransition` fires only when the
 * verdict changes.
 */
class BackendChecker {
  private timer: NodeJS.Timeout | null = null;
  private guard: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly backend: BackendRef,
    private readonly config: HealthCheckConfig,
    private readonly probe: Probe,
    private state: CheckState,
    private readonly onTransition: (healthy: boolean) => void,
  ) {}

  get verdict(): boolean | null {
    return this.state.checked ? this.state.healthy : null;
  }

  start(random: () => number): void {
    this.schedule(Math.floor(random() * Math.min(this.config.interval, MAX_FIRST_CHECK_DELAY_MS)));
  }

  /** Adopts a verdict known from elsewhere while no check has decided yet (a pool rebuilt on reload). */
  seed(healthy: boolean): void {
    if (this.state.checked) return;
    const changed = healthy !== this.state.healthy;
    this.state = { healthy, checked: true, streak: 0 };
    if (changed) this.onTransition(healthy);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.guard) clearTimeout(this.guard);
    this.timer = null;
    this.guard = null;
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      this.check();
    }, delay);
    this.timer.unref();
  }

  private check(): void {
    const started = Date.now();
    const guard = new Promise<boolean>((resolve) => {
      this.guard = setTimeout(() => resolve(false), this.config.timeout + 50);
      this.guard.unref();
    });
    void Promise.race([this.probe(this.backend, this.config).catch(() => false), guard]).then((ok) => {
      if (this.guard) clearTimeout(this.guard);
      this.guard = null;
      if (this.stopped) return;
      const next = nextCheckState(this.state, ok, this.config);
      const changed = next.healthy !== this.state.healthy;
      this.state = next;
      if (changed) this.onTransition(next.healthy);
      // A listener may have stopped this checker (its last pool went away).
      if (!this.stopped) this.schedule(Math.max(0, this.config.interval - (Date.now() - started)));
    });
  }
}

function initialState(known: boolean | undefined): CheckState {
  return known === undefined ? { ...UNCHECKED } : { healthy: known, checked: true, streak: 0 };
}

/** Checks every backend until stopped, each with its own chain (see BackendChecker). */
export function startActiveChecks(
  backends: readonly BackendRef[],
  config: HealthCheckConfig,
  onTransition: (key: string, healthy: boolean) => void,
  options: ActiveCheckOptions = {},
): ActiveChecks {
  const probe = options.probe ?? defaultProbe;
  const random = options.random ?? Math.random;
  const checkers = backends.map((backend) => {
    const known = options.initial?.get(backend.key);
    const checker = new BackendChecker(backend, config, probe, initialState(known), (healthy) => onTransition(backend.key, healthy));
    checker.start(random);
    return checker;
  });
  return {
    stop(): void {
      for (const checker of checkers) checker.stop();
    },
  };
}

export interface HealthSubscription {
  /** The shared checker's verdict at subscription time; null until its first check (presumed healthy). */
  readonly verdict: boolean | null;
  /** Stops the shared checker when this was its last subscriber. Idempotent. */
  unsubscribe(): void;
}

export interface HealthCheckHub {
  /**
   * Subscribes to the one checker of (backend key, effective config), starting it for the first subscriber.
   * `known` is a verdict the subscriber already holds (a pool rebuilt on reload): it seeds a checker that has
   * not decided yet, and then reaches the other subscribers as a transition. `onTransition` fires on every
   * later change of the shared verdict.
   */
  subscribe(
    backend: BackendRef,
    config: HealthCheckConfig,
    onTransition: (healthy: boolean) => void,
    known?: boolean,
  ): HealthSubscription;
  /** Checkers running: one per distinct (backend key, config) with at least one subscriber. */
  readonly size: number;
}

/** Identity of a check: pools whose backend key and effective config agree share one checker. */
function checkIdentity(backend: BackendRef, config: HealthCheckConfig): string {
  return JSON.stringify([backend.key, config.type, config.path, config.interval, config.timeout, config.rise, config.fall]);
}

/**
 * One active checker per (backend key, effective health-check config), shared by every pool that uses it and
 * reference-counted by its subscriptions: 10,000 routes to one backend cost one probe per interval, not 10,000.
 */
export function createHealthCheckHub(options: Pick<ActiveCheckOptions, 'probe' | 'random'> = {}): HealthCheckHub {
  const probe = options.probe ?? defaultProbe;
  const random = options.random ?? Math.random;
  const shared = new Map<string, { checker: BackendChecker; listeners: Set<(healthy: boolean) => void> }>();

  return {
    get size() {
      return shared.size;
    },
    subscribe(backend, config, onTransition, known) {
      const identity = checkIdentity(backend, config);
      let entry = shared.get(identity);
      if (entry === undefined) {
        const listeners = new Set<(healthy: boolean) => void>();
        const notify = (healthy: boolean): void => {
          // A copy: a listener may unsubscribe (itself or others) while we deliver.
          for (const listener of [...listeners]) listener(healthy);
        };
        const created = { checker: new BackendChecker(backend, config, probe, initialState(known), notify), listeners };
        shared.set(identity, created);
        created.checker.start(random);
        entry = created;
      } else if (known !== undefined) {
        entry.checker.seed(known);
      }
      const own = entry;
      // A fresh function per subscription, so two subscribers passing the same callback are counted twice.
      const listener = (healthy: boolean): void => onTransition(healthy);
      own.listeners.add(listener);
      return {
        verdict: own.checker.verdict,
        unsubscribe(): void {
          if (!own.listeners.delete(listener) || own.listeners.size > 0) return;
          own.checker.stop();
          if (shared.get(identity) === own) shared.delete(identity);
        },
      };
    },
  };
}
