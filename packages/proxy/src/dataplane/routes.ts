// Compiles entrypoints into the data plane's route table: one CompiledRoute per HTTP entrypoint, with its
// middleware chain and forwarding settings decided here, once, instead of per request.
import type http from 'node:http';
import type https from 'node:https';
import type { Entrypoint } from '../model/entrypoint.js';
import type { UpstreamPool } from '../upstream/contract.js';
import { compileRouteTable, type RouteTable } from '../routing/table.js';
import type { TrustedProxies } from './context.js';
import { BasicAuth } from './middlewares/basic-auth.js';
import { ForwardAuth } from './middlewares/forward-auth.js';
import { compileHeaderRules, type HeaderRules } from './middlewares/headers.js';
import { RateLimiter, RateLimitState, rateLimitKey } from './middlewares/rate-limit.js';
import { redirectMiddlewares } from './middlewares/redirect.js';
import type { Middleware } from './middlewares/types.js';
import type { DataPlaneMetrics, EntrypointSeries } from './metrics.js';

/** Used when backend_timeout is null: a backend has this long to send response headers (nginx's default). */
export const DEFAULT_BACKEND_TIMEOUT_MS = 60_000;

export interface CompiledRoute {
  id: string;
  pool: UpstreamPool | undefined;
  chain: readonly Middleware[];
  /** Prefix removed from the path before forwarding (strip_prefix with a Prefix or Exact path rule). */
  stripPrefix: string | null;
  /** add_prefix without a trailing slash. */
  addPrefix: string | null;
  headers: HeaderRules | null;
  timeoutMs: number;
  /** Name of the sticky-session cookie, or null. */
  stickyCookie: string | null;
  compress: boolean;
  series: EntrypointSeries;
}

export interface CompileDeps {
  pools: ReadonlyMap<string, UpstreamPool>;
  trusted: TrustedProxies;
  agents: { http: http.Agent; https: https.Agent };
  metrics: DataPlaneMetrics;
  /** Rate-limit buckets of the previous table, by entrypoint id; reused when the limits are unchanged. */
  previousLimits: ReadonlyMap<string, { key: string; state: RateLimitState }>;
}

export interface CompiledTable {
  table: RouteTable<CompiledRoute>;
  limits: Map<string, { key: string; state: RateLimitState }>;
}

export function stickyCookieName(entrypointId: string): string {
  return `svc_sticky_${entrypointId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

export function compileRoutes(entrypoints: readonly Entrypoint[], deps: CompileDeps): CompiledTable {
  const limits = new Map<string, { key: string; state: RateLimitState }>();
  const seriesById = new Map<string, EntrypointSeries>();
  const table = compileRouteTable(entrypoints, (ep): CompiledRoute => {
    const c = ep.config;
    const chain: Middleware[] = [...redirectMiddlewares(c)];
    if (c.rate_limit !== null && c.rate_limit.average > 0) {
      const key = rateLimitKey(c.rate_limit);
      const previous = deps.previousLimits.get(ep.id);
      const state = previous !== undefined && previous.key === key ? previous.state : new RateLimitState(c.rate_limit);
      limits.set(ep.id, { key, state });
      chain.push(new RateLimiter(state, deps.trusted));
    }
    if (c.auth !== null && c.auth.basic.length > 0) chain.push(new BasicAuth(c.auth.basic, c.www_authenticate));
    const timeoutMs = c.backend_timeout !== null && c.backend_timeout > 0 ? c.backend_timeout : DEFAULT_BACKEND_TIMEOUT_MS;
    if (c.forward_auth !== null) chain.push(new ForwardAuth(c.forward_auth, deps.agents, timeoutMs));
    let stripPrefix: string | null = null;
    if (c.strip_prefix && c.path !== null && (c.path.rule_type === 'Prefix' || c.path.rule_type === 'Exact')) {
      let value = c.path.value;
      while (value.endsWith('/')) value = value.slice(0, -1);
      stripPrefix = value === '' ? null : value;
    }
    let addPrefix: string | null = null;
    if (!c.strip_prefix && c.add_prefix !== null && c.add_prefix !== '' && c.add_prefix !== '/') {
      // encodeURI: a space or non-ASCII character in the config must not make every request of the route fail.
      addPrefix = encodeURI(c.add_prefix.startsWith('/') ? c.add_prefix : `/${c.add_prefix}`).replace(/\/+$/, '');
    }
    let series = seriesById.get(ep.id);
    if (series === undefined) {
      series = deps.metrics.forEntrypoint(ep.id);
      seriesById.set(ep.id, series);
    }
    return {
      id: ep.id,
      pool: deps.pools.get(ep.id),
      chain,
      stripPrefix,
      addPrefix,
      headers: compileHeaderRules(c.headers),
      timeoutMs,
      stickyCookie: c.sticky_session ? stickyCookieName(ep.id) : null,
      compress: c.compress,
      series,
    };
  });
  return { table, limits };
}

/** The upstream path for `path` (no query) under the route's strip/add prefix rules. */
export function rewritePath(route: CompiledRoute, path: string): string {
  let out = path;
  if (route.stripPrefix !== null && out.startsWith(route.stripPrefix)) {
    out = out.slice(route.stripPrefix.length);
    if (out === '' || out.charCodeAt(0) !== 47) out = `/${out}`;
  }
  if (route.addPrefix !== null) out = route.addPrefix + out;
  return out;
}
