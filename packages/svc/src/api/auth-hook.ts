import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from './context.js';

/** Authenticates every request and enforces each route's `config.auth` (deny by default). */
export function registerAuthHook(_app: FastifyInstance, _deps: ApiDeps): void {
  // Not implemented yet.
}
