// The data plane of one process: HTTP server, TCP/UDP listeners, route table, upstream pools and metrics.
// Used directly when `workers` <= 1, and inside each worker process otherwise.
import http from 'node:http';
import https from 'node:https';
import type { Entrypoint } from '../model/entrypoint.js';
import type { DataPlane, DataPlaneOptions } from '../model/dataplane-contract.js';
import type { UpstreamPool, UpstreamRegistry } from '../upstream/contract.js';
import { parseListenAddress } from '../upstream/address.js';
import { compileRouteTable, type RouteTable } from '../routing/table.js';
import { TrustedProxies } from './context.js';
import { HttpProxy } from './http.js';
import { DataPlaneMetrics } from './metrics.js';
import { compileRoutes, type CompiledRoute } from './routes.js';
import type { RateLimitState } from './middlewares/rate-limit.js';
import { findListenerEntrypoint, startTcpListener, type TcpListenerHandle } from './tcp.js';
import { startUdpListener, type UdpListenerHandle } from './udp.js';

export interface BoundAddresses {
  http: { address: string; port: number } | null;
  tcp: Record<string, { address: string; port: number }>;
  udp: Record<string, { address: string; port: number }>;
}

/** Pool per TCP or UDP listener name: the entrypoint that names the listener in `config.entrypoint`. */
export function listenerPools(
  entrypoints: readonly Entrypoint[],
  listeners: readonly { name: string }[],
  protocol: 'Tcp' | 'Udp',
  pools: ReadonlyMap<string, UpstreamPool>,
): Map<string, UpstreamPool> {
  const out = new Map<string, UpstreamPool>();
  for (const l of listeners) {
    const ep = findListenerEntrypoint(entrypoints, protocol, l.name);
    const pool = ep === undefined ? undefined : pools.get(ep.id);
    if (pool !== undefined) out.set(l.name, pool);
  }
  return out;
}

/** Grace period for requests in flight when the data plane stops. */
const STOP_DRAIN_MS = 5_000;

export class LocalDataPlane implements DataPlane {
  readonly metricsSet = new DataPlaneMetrics();
  private readonly trusted: TrustedProxies;
  private readonly agents = {
    http: new http.Agent({ keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' }),
    https: new https.Agent({ keepAlive: true, maxFreeSockets: 64, scheduling: 'lifo' }),
  };
  private table: RouteTable<CompiledRoute> = compileRouteTable<CompiledRoute>([], () => {
    throw new Error('unreachable');
  });
  private limits = new Map<string, { key: string; state: RateLimitState }>();
  /** Pool per TCP listener name, swapped with the route table. */
  private tcpPools = new Map<string, UpstreamPool>();
  private udpPools = new Map<string, UpstreamPool>();
  private readonly httpProxy: HttpProxy | null;
  private tcpHandles: TcpListenerHandle[] = [];
  private udpHandles: UdpListenerHandle[] = [];
  private started = false;

  constructor(
    private readonly options: DataPlaneOptions,
    private readonly registry: UpstreamRegistry,
    /**
     * False in cluster workers: the primary runs the active checks and counts reloads, so the backend-health
     * gauge and the reload counter are its series alone (summed worker copies would be wrong).
     */
    private readonly ownsSharedSeries: boolean,
  ) {
    this.trusted = new TrustedProxies(options.trusted_proxies);
    this.httpProxy =
      options.listeners.http === null
        ? null
        : new HttpProxy({
            scheme: 'http',
            trusted: this.trusted,
            agent: this.agents.http,
            metrics: this.metricsSet,
            table: () => this.table,
          });
    if (ownsSharedSeries) {
      registry.onHealthChange((id, key, healthy) => this.metricsSet.backendUp.labels(id, key).set(healthy ? 1 : 0));
    }
  }

  async start(): Promise<void> {
    if (this.started) return;
    const l = this.options.listeners;
    try {
      if (this.httpProxy !== null && l.http !== null) await listen(this.httpProxy.server, l.http.listen_address);
      for (const tcp of l.tcp) {
        this.tcpHandles.push(await startTcpListener(tcp, () => this.tcpPools.get(tcp.name)));
      }
      for (const udp of l.udp) {
        this.udpHandles.push(await startUdpListener(udp, () => this.udpPools.get(udp.name)));
      }
    } catch (err) {
      await this.closeListeners(0);
      throw err;
    }
    this.started = true;
  }

  update(entrypoints: readonly Entrypoint[]): void {
    const pools = this.registry.sync(entrypoints);
    const compiled = compileRoutes(entrypoints, {
      pools,
      trusted: this.trusted,
      agents: this.agents,
      metrics: this.metricsSet,
      previousLimits: this.limits,
    });
    const tcpPools = listenerPools(entrypoints, this.options.listeners.tcp, 'Tcp', pools);
    const udpPools = listenerPools(entrypoints, this.options.listeners.udp, 'Udp', pools);
    // The swap: requests already routed keep the route objects they hold.
    this.table = compiled.table;
    this.limits = compiled.limits;
    this.tcpPools = tcpPools;
    this.udpPools = udpPools;
    if (this.ownsSharedSeries) {
      this.metricsSet.reloads.inc();
      this.metricsSet.backendUp.reset();
      for (const [id, pool] of pools) {
        const down = new Set(pool.unhealthy());
        for (const b of pool.backends) this.metricsSet.backendUp.labels(id, b.key).set(down.has(b.key) ? 0 : 1);
      }
    }
  }

  setHealthy(entrypointId: string, key: string, healthy: boolean): void {
    this.registry.get(entrypointId)?.setHealthy(key, healthy);
  }

  unhealthyBackends(entrypointId: string): string[] {
    return this.registry.get(entrypointId)?.unhealthy() ?? [];
  }

  metrics(): Promise<string> {
    return this.metricsSet.registry.metrics();
  }

  addresses(): BoundAddresses {
    const bound = this.httpProxy?.server.address();
    const tcp: BoundAddresses['tcp'] = {};
    for (const h of this.tcpHandles) tcp[h.name] = h.address();
    const udp: BoundAddresses['udp'] = {};
    for (const h of this.udpHandles) udp[h.name] = h.address();
    return {
      udp,
      http: bound !== undefined && bound !== null && typeof bound !== 'string' ? { address: bound.address, port: bound.port } : null,
      tcp,
    };
  }

  private async closeListeners(drainMs: number): Promise<void> {
    const waits: Promise<unknown>[] = [...this.tcpHandles.map((h) => h.close(drainMs)), ...this.udpHandles.map((h) => h.close())];
    this.tcpHandles = [];
    this.udpHandles = [];
    const server = this.httpProxy?.server;
    if (server !== undefined && server.listening) {
      waits.push(new Promise<void>((resolve) => server.close(() => resolve())));
      server.closeIdleConnections();
      const proxy = this.httpProxy as HttpProxy;
      const timer = setTimeout(() => {
        server.closeAllConnections();
        proxy.closeUpgraded();
      }, drainMs);
      await Promise.all(waits);
      clearTimeout(timer);
      return;
    }
    await Promise.all(waits);
  }

  async stop(): Promise<void> {
    await this.closeListeners(STOP_DRAIN_MS);
    this.registry.stop();
    this.agents.http.destroy();
    this.agents.https.destroy();
    this.started = false;
  }
}

function listen(server: HttpProxy['server'], listenAddress: string): Promise<void> {
  const parsed = parseListenAddress(listenAddress);
  if (parsed === null) return Promise.reject(new Error(`http listener: invalid listen_address "${listenAddress}"`));
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(new Error(`http listener: cannot listen on ${listenAddress}: ${err.message}`));
    server.once('error', onError);
    server.listen({ host: parsed.host, port: parsed.port, backlog: 4096 }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
