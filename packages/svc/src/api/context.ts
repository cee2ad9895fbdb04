// What every route handler may rely on: the authenticated principal, the scope a route requires, and the
// namespace rule (spec "Authentication" 7-8). The auth hook (api/auth-hook.ts) fills `request.principal`
// before any handler runs and refuses routes that declare no `auth` (deny by default).
import type { FastifyRequest } from 'fastify';
import type { Db } from '../store/db.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { SvcConfig } from '../config/config-file.js';
import type { StreamTickets } from './stream-tickets.js';
import type { MetricsRegistry } from '../metrics/registry.js';
import type { SchedulerHandle } from '../scheduler/handle.js';
import { ApiProblem, forbidden, unauthorized } from './problem.js';

export const SCOPES = [
  'deployments:read',
  'deployments:write',
  'secrets:read',
  'secrets:write',
  'configs:read',
  'configs:write',
  'namespaces:read',
  'namespaces:write',
  'users:read',
  'users:write',
  'webhooks:read',
  'webhooks:write',
  'volumes:read',
  'volumes:write',
  'admin',
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * `public` routes skip authentication; `authenticated` routes accept any valid token whatever its scopes (only
 * `GET /users/me` and `POST /logout`-like self-service routes); every other route names the one scope it needs.
 */
export type RouteAuth =
  | { public: true }
  | { authenticated: true }
  | {
      scope: Scope;
      /**
       * Browser streams only (`GET /deployments/:id/logs`, `/exec`): without an Authorization header, a
       * `?ticket=` from POST /auth/stream-ticket for this `:id` and this stream authenticates instead, once.
       */
      streamTicket?: 'logs' | 'exec';
    };

export interface Principal {
  tokenId: string;
  userId: string;
  username: string;
  kind: 'session' | 'pat';
  scopes: readonly Scope[];
  /** Empty = every namespace. */
  namespaces: readonly string[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** Everything the API modules share. Built once by server/app.ts. */
export interface ApiDeps {
  db: Db;
  secretBox: SecretBox;
  /** Effective settings: `config.scheduler.interval` already has SVC_SCHEDULER_INTERVAL applied. */
  config: SvcConfig;
  now: () => Date;
  /** Single-use tickets for browser streams (logs SSE, exec WebSocket): `consume()` in those routes. */
  streamTickets: StreamTickets;
  /** /metrics sources: the inventory is built in; per-deployment series are added with `addSource()`. */
  metrics: MetricsRegistry;
  /** The reconcile loop as the deployments API sees it: nudge, latest observation, runtimes for logs/stats/exec. */
  scheduler: SchedulerHandle;
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized();
  return request.principal;
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.includes('admin') || principal.scopes.includes(scope);
}

export function mayAccessNamespace(principal: Principal, namespace: string): boolean {
  return principal.namespaces.length === 0 || principal.namespaces.includes(namespace);
}

/** Throws 403 unless the caller may act on `namespace` (checked against the loaded resource's real namespace). */
export function assertNamespaceAccess(request: FastifyRequest, namespace: string): void {
  if (!mayAccessNamespace(principalOf(request), namespace)) {
    throw forbidden(`not authorized for namespace '${namespace}'`);
  }
}

/** Namespaces a list endpoint may return: null = all. */
export function visibleNamespaces(request: FastifyRequest): readonly string[] | null {
  const principal = principalOf(request);
  return principal.namespaces.length === 0 ? null : principal.namespaces;
}

export { ApiProblem };
