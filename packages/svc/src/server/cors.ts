// CORS (spec "Authentication" 12): only when `cors_origins` is configured, and only for the listed origins
// (`"*"` in the list allows any origin). Preflights are answered here, before authentication, because a
// browser never sends credentials on a preflight.
import type { FastifyInstance } from 'fastify';

export const CORS_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';
export const CORS_HEADERS = 'Authorization, Content-Type, Accept';
const PREFLIGHT_MAX_AGE_SECONDS = 600;

export function isAllowedOrigin(origin: string, allowed: readonly string[]): boolean {
  return allowed.includes('*') || allowed.includes(origin);
}

export function registerCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !isAllowedOrigin(origin, origins)) return;
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Vary', 'Origin');
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      reply.header('Access-Control-Allow-Methods', CORS_METHODS);
      reply.header('Access-Control-Allow-Headers', CORS_HEADERS);
      reply.header('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_SECONDS));
      return reply.code(204).send();
    }
    return undefined;
  });
}
