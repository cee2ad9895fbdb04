// Authentication and authorisation for every route (spec "Authentication" 5-7), deny by default:
//   - `config.auth = { public: true }` skips authentication;
//   - every other route needs a valid bearer token (401 otherwise);
//   - a route that declares no `auth` is refused to every token (403), so a forgotten mapping fails closed;
//   - `{ scope }` routes need that scope or `admin` (403 otherwise); `{ authenticated: true }` routes need none.
// Runs in onRequest, before the body is read, so unauthenticated callers cannot make the server parse bodies.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { hasScope, type ApiDeps, type Principal, type RouteAuth } from './context.js';
import { forbidden, unauthorized } from './problem.js';
import { createTokenStore, decodeNamespaces, decodeScopes, type TokenStore } from '../store/tokens.js';
import { hashToken, isWellFormedToken } from '../crypto/token.js';
import { databaseVersion } from './read-cache.js';

/** last_used_at is written at most this often per token, so reads do not each cost a write. */
export const LAST_USED_RESOLUTION_MS = 60_000;
const MAX_AUTHORIZATION_LENGTH = 512;

/** The bearer token of a request, or null when the header is absent or not a Bearer credential. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string' || header.length > MAX_AUTHORIZATION_LENGTH) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match ? (match[1] ?? null) : null;
}

export interface Authenticator {
  /** The principal of a presented token, or null when it is malformed, unknown, revoked or expired. */
  authenticate(token: string): Principal | null;
}

/** Most tokens a process keeps resolved in memory; beyond that the cache starts over. */
const MAX_CACHED_PRINCIPALS = 10_000;

interface ResolvedToken {
  /** databaseVersion() when resolved: any write since (a revocation, a deleted user...) makes the entry stale. */
  version: string;
  principal: Principal;
  expireAt: number | null;
  lastUsedAt: number | null;
}

/**
 * Resolves tokens by SHA-256, caching the result until the database changes, so a read-heavy API does one hash
 * and one version check per request instead of a join. Revocation is a write, so it is seen at once.
 */
export function createAuthenticator(tokens: TokenStore, now: () => Date, version: () => string): Authenticator {
  const resolved = new Map<string, ResolvedToken>();

  function resolve(hash: string, currentVersion: string): ResolvedToken | null {
    const row = tokens.byHash(hash);
    if (!row || row.revoked_at !== null) return null;
    const entry: ResolvedToken = {
      version: currentVersion,
      principal: {
        tokenId: row.id,
        userId: row.user_id,
        username: row.username,
        kind: row.kind,
        scopes: decodeScopes(row.scopes),
        namespaces: decodeNamespaces(row.namespaces),
      },
      expireAt: row.expire_at === null ? null : Date.parse(row.expire_at),
      lastUsedAt: row.last_used_at === null ? null : Date.parse(row.last_used_at),
    };
    if (resolved.size >= MAX_CACHED_PRINCIPALS) resolved.clear();
    resolved.set(hash, entry);
    return entry;
  }

  return {
    authenticate(token) {
      if (!isWellFormedToken(token)) return null;
      const hash = hashToken(token);
      const currentVersion = version();
      const cached = resolved.get(hash);
      const entry = cached !== undefined && cached.version === currentVersion ? cached : resolve(hash, currentVersion);
      if (!entry) return null;
      const at = now();
      if (entry.expireAt !== null && entry.expireAt <= at.getTime()) return null;
      if (entry.lastUsedAt === null || at.getTime() - entry.lastUsedAt >= LAST_USED_RESOLUTION_MS) {
        tokens.touch(entry.principal.tokenId, at);
        // The touch is a write, so the next request resolves the token again: at most once a minute per token.
        entry.lastUsedAt = at.getTime();
      }
      return entry.principal;
    },
  };
}

/** The principal a `?ticket=` stands for, on routes that declare `streamTicket`; null otherwise. */
function ticketPrincipal(request: FastifyRequest, auth: RouteAuth | undefined, deps: ApiDeps): Principal | null {
  if (auth === undefined || !('scope' in auth) || auth.streamTicket === undefined) return null;
  const query = request.query as Record<string, unknown> | undefined;
  const params = request.params as Record<string, unknown> | undefined;
  const ticket = query?.ticket;
  const deploymentId = params?.id;
  if (typeof ticket !== 'string' || typeof deploymentId !== 'string' || ticket.length > 128) return null;
  return deps.streamTickets.consume(ticket, deploymentId, auth.streamTicket);
}

export function registerAuthHook(app: FastifyInstance, deps: ApiDeps): void {
  const authenticator = createAuthenticator(createTokenStore(deps.db), deps.now, () => databaseVersion(deps.db));
  app.addHook('onRequest', async (request, reply) => {
    // Unknown paths go to the not-found handler: a 404 reveals nothing a 401 would hide.
    if (request.is404) return;
    const auth = request.routeOptions.config.auth;
    if (auth !== undefined && 'public' in auth) return;
    const token = bearerToken(request);
    const principal = token !== null ? authenticator.authenticate(token) : ticketPrincipal(request, auth, deps);
    if (!principal) {
      // RFC 6750: tells HTTP clients which scheme to use.
      reply.header('WWW-Authenticate', 'Bearer realm="svc"');
      throw unauthorized();
    }
    request.principal = principal;
    if (auth === undefined) throw forbidden('this route has no scope mapping and is not reachable with a token');
    if ('scope' in auth && !hasScope(principal, auth.scope)) throw forbidden(`token lacks the '${auth.scope}' scope`);
  });
}
