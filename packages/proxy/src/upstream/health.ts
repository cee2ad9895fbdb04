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
 * Checks every backend of one pool until stopped. Each backend runs its own chain: the first check after a
 * random delay below min(interval, 1 s), then one every `interval` measured from the start of the previous one,
 * never two at once. `onTransition` fires only when a verdict changes.
 */
export function startActiveChecks(
  backends: readonly BackendRef[],
  config: HealthCheckConfig,
  onTransition: (key: string, healthy: boolean) => void,
  options: ActiveCheckOptions = {},
): ActiveChecks {
  const probe = options.probe ?? defaultProbe;
  const random = options.random ?? Math.random;
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const schedule = (delay: number, run: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, delay);
    timer.unref();
    timers.add(timer);
  };

  for (const backend of backends) {
    const known = options.initial?.get(backend.key);
    let state: CheckState = known === undefined ? { ...UNCHECKED } : { healthy: known, checked: true, streak: 0 };
    const check = (): void => {
      const started = Date.now();
      const guard = new Promise<boolean>((resolve) => schedule(config.timeout + 50, () => resolve(false)));
      void Promise.race([probe(backend, config).catch(() => false), guard]).then((ok) => {
        if (stopped) return;
        const next = nextCheckState(state, ok, config);
        const changed = next.healthy !== state.healthy;
        state = next;
        if (changed) onTransition(backend.key, next.healthy);
        schedule(Math.max(0, config.interval - (Date.now() - started)), check);
      });
    };
    schedule(Math.floor(random() * Math.min(config.interval, MAX_FIRST_CHECK_DELAY_MS)), check);
  }

  return {
    stop(): void {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
