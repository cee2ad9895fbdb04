// `workers` > 1: the primary forks worker processes that share the listening sockets (node:cluster) and serve
// traffic; the primary binds nothing itself. It owns the upstream registry that runs the active health checks
// and pushes every verdict to the workers (setHealthy), pushes each entrypoint set, and aggregates metrics.
import cluster, { type Worker } from 'node:cluster';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AggregatorRegistry } from 'prom-client';
import type { Entrypoint } from '../model/entrypoint.js';
import type { DataPlaneOptions } from '../model/dataplane-contract.js';
import type { UpstreamPool, UpstreamRegistry } from '../upstream/contract.js';
import { createUpstreamRegistry } from '../upstream/registry.js';
import { asFromWorker, type FromWorker, type HealthEntry, type ToWorker } from './cluster-protocol.js';
import { listenerPools, type BoundAddresses } from './local.js';
import { startUdpListener, type UdpListenerHandle } from './udp.js';
import { DataPlaneMetrics } from './metrics.js';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;
const METRICS_TIMEOUT_MS = 2_000;
const RESPAWN_DELAY_MS = 1_000;

export class ClusterDataPlane {
  private readonly registry: UpstreamRegistry = createUpstreamRegistry({ activeChecks: true });
  private readonly own = new DataPlaneMetrics();
  private entrypoints: Entrypoint[] = [];
  private readonly health = new Map<string, HealthEntry>();
  private pendingHealth: HealthEntry[] = [];
  /** Per worker, `entrypointId key` of the backends it holds out of its rotation (passive failures included). */
  private readonly workerDown = new Map<Worker, Set<string>>();
  private workers = new Set<Worker>();
  private stopping = false;
  private bound: BoundAddresses = { http: null, tcp: {}, udp: {} };
  /** UDP flows are pinned per process, so UDP listeners live in the primary only (workers get `udp: []`). */
  private udpHandles: UdpListenerHandle[] = [];
  private udpPools = new Map<string, UpstreamPool>();
  private seq = 0;
  private readonly pendingMetrics = new Map<number, { data: object[][]; left: number; done: () => void }>();

  constructor(private readonly options: DataPlaneOptions) {
    this.registry.onHealthChange((id, key, healthy) => {
      this.health.set(`${id} ${key}`, [id, key, healthy]);
      this.own.backendUp.labels(id, key).set(healthy ? 1 : 0);
      this.queueHealth([id, key, healthy]);
    });
  }

  /**
   * Verdicts go out in one message per tick: one shared checker's transition reaches every pool that uses the
   * backend (10,000 routes, 10,000 entries), and a verdict handed to a pool created by `update` must reach the
   * workers after the update message that creates the pool there.
   */
  private queueHealth(entry: HealthEntry): void {
    this.pendingHealth.push(entry);
    if (this.pendingHealth.length > 1) return;
    process.nextTick(() => {
      const health = this.pendingHealth;
      this.pendingHealth = [];
      this.broadcast({ t: 'svc-proxy:health', health });
    });
  }

  private broadcast(msg: ToWorker): void {
    for (const w of this.workers) if (w.isConnected()) w.send(msg);
  }

  private fork(): Worker {
    const self = fileURLToPath(import.meta.url);
    cluster.setupPrimary({ exec: self.replace(/cluster(\.[cm]?[jt]s)$/, `worker${extname(self)}`), args: [], silent: false });
    const worker = cluster.fork();
    this.workers.add(worker);
    worker.on('message', (raw: unknown) => this.onMessage(worker, asFromWorker(raw)));
    worker.on('exit', () => {
      this.workers.delete(worker);
      this.workerDown.delete(worker);
      if (!this.stopping) setTimeout(() => this.respawn(), RESPAWN_DELAY_MS).unref();
    });
    return worker;
  }

  private respawn(): void {
    if (this.stopping) return;
    this.fork();
  }

  private onMessage(worker: Worker, msg: FromWorker | null): void {
    if (msg?.t === 'svc-proxy:hello') {
      // Sent now, not at fork, so it carries the entrypoints and health known at this moment.
      const options: DataPlaneOptions = { ...this.options, listeners: { ...this.options.listeners, udp: [] } };
      worker.send({ t: 'svc-proxy:init', options, entrypoints: this.entrypoints, health: [...this.health.values()] } satisfies ToWorker);
      return;
    }
    if (msg?.t === 'svc-proxy:verdicts') {
      let down = this.workerDown.get(worker);
      if (down === undefined) this.workerDown.set(worker, (down = new Set()));
      for (const [id, key, healthy] of msg.health) {
        // Only entrypoints the primary knows: a late message about a removed route must not linger.
        if (healthy || this.registry.get(id) === undefined) down.delete(`${id} ${key}`);
        else down.add(`${id} ${key}`);
      }
      return;
    }
    if (msg === null || msg.t !== 'svc-proxy:metrics') return;
    const pending = this.pendingMetrics.get(msg.seq);
    if (pending === undefined) return;
    pending.data.push(msg.data);
    if (--pending.left === 0) pending.done();
  }

  async start(): Promise<void> {
    const count = this.options.workers;
    const ready = Array.from({ length: count }, () => {
      const worker = this.fork();
      return new Promise<BoundAddresses>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('data-plane worker did not start in time')), START_TIMEOUT_MS);
        worker.on('message', (raw: unknown) => {
          const msg = asFromWorker(raw);
          if (msg?.t === 'svc-proxy:ready') {
            clearTimeout(timer);
            resolve(msg.addresses);
          } else if (msg?.t === 'svc-proxy:failed') {
            clearTimeout(timer);
            reject(new Error(msg.message));
          }
        });
        worker.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`data-plane worker exited with code ${code}`));
        });
      });
    });
    try {
      const addresses = await Promise.all(ready);
      for (const udp of this.options.listeners.udp) {
        this.udpHandles.push(await startUdpListener(udp, () => this.udpPools.get(udp.name)));
      }
      const udp: BoundAddresses['udp'] = {};
      for (const h of this.udpHandles) udp[h.name] = h.address();
      this.bound = { ...(addresses[0] ?? this.bound), udp };
    } catch (err) {
      await this.stop();
      throw err;
    }
  }

  update(entrypoints: readonly Entrypoint[]): void {
    this.entrypoints = [...entrypoints];
    const pools = this.registry.sync(this.entrypoints);
    this.udpPools = listenerPools(this.entrypoints, this.options.listeners.udp, 'Udp', pools);
    for (const [k, [id]] of this.health) if (!pools.has(id)) this.health.delete(k);
    // A backend a route no longer lists leaves the worker's pool without a transition: forget it here too.
    for (const down of this.workerDown.values()) {
      for (const k of down) {
        const space = k.indexOf(' ');
        const pool = pools.get(k.slice(0, space));
        const key = k.slice(space + 1);
        if (pool === undefined || !pool.backends.some((b) => b.key === key)) down.delete(k);
      }
    }
    this.own.reloads.inc();
    this.broadcast({ t: 'svc-proxy:update', entrypoints: this.entrypoints });
  }

  /**
   * The primary's verdicts (active checks) plus every backend that some worker holds out of its rotation after
   * passive failures, in backend order.
   */
  unhealthyBackends(entrypointId: string): string[] {
    const pool = this.registry.get(entrypointId);
    if (pool === undefined) return [];
    const down = new Set(pool.unhealthy());
    for (const workerDown of this.workerDown.values()) {
      for (const b of pool.backends) if (workerDown.has(`${entrypointId} ${b.key}`)) down.add(b.key);
    }
    return [...new Set(pool.backends.map((b) => b.key))].filter((key) => down.has(key));
  }

  /** The primary's series (reloads, backend health) plus every worker's, summed. */
  async metrics(): Promise<string> {
    const seq = ++this.seq;
    const live = [...this.workers].filter((w) => w.isConnected());
    const data: object[][] = [];
    await new Promise<void>((resolve) => {
      if (live.length === 0) return resolve();
      const timer = setTimeout(resolve, METRICS_TIMEOUT_MS);
      this.pendingMetrics.set(seq, { data, left: live.length, done: () => { clearTimeout(timer); resolve(); } });
      for (const w of live) w.send({ t: 'svc-proxy:metrics', seq } satisfies ToWorker);
    });
    this.pendingMetrics.delete(seq);
    data.push(await this.own.registry.getMetricsAsJSON());
    return AggregatorRegistry.aggregate(data).metrics();
  }

  addresses(): BoundAddresses {
    return this.bound;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.udpHandles.map((h) => h.close()));
    this.udpHandles = [];
    const exits = [...this.workers].map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.isDead()) return resolve();
          const timer = setTimeout(() => {
            w.process.kill('SIGKILL');
          }, STOP_TIMEOUT_MS);
          w.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          if (w.isConnected()) w.send({ t: 'svc-proxy:stop' } satisfies ToWorker);
          else w.process.kill('SIGTERM');
        }),
    );
    await Promise.all(exits);
    this.registry.stop();
  }
}
