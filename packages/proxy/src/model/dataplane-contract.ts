// The boundary between the control plane (config, API, providers, diagnostics) and the data plane
// (routing, listeners, middlewares, upstream pools and health). The control plane owns the merged set of
// entrypoints; the data plane compiles it into a route table and swaps it atomically.
import type { Entrypoint } from './entrypoint.js';

export interface ListenerConfig {
  http: { listen_address: string } | null;
  https: { listen_address: string } | null;
  tcp: { name: string; listen_address: string }[];
  udp: { name: string; listen_address: string }[];
}

export interface DataPlaneOptions {
  listeners: ListenerConfig;
  /** Number of worker processes serving traffic; 0 or 1 = serve in this process. */
  workers: number;
  /** Peer addresses (IPs or CIDRs) whose X-Forwarded-For is trusted. */
  trusted_proxies: string[];
}

export interface DataPlane {
  /** Binds every listener. Rejects (and binds nothing) when one cannot be bound. */
  start(): Promise<void>;
  /** Compile and atomically swap the route table. Never drops connections in flight. */
  update(entrypoints: readonly Entrypoint[]): void;
  /** `address:port` of each backend currently marked unhealthy, per entrypoint id. */
  unhealthyBackends(entrypointId: string): string[];
  /** Prometheus text exposition of data-plane series (requests, latency, backend health, reloads). */
  metrics(): Promise<string>;
  stop(): Promise<void>;
}
