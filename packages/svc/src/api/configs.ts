import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from './context.js';

export function registerConfigRoutes(_app: FastifyInstance, _deps: ApiDeps): void {
  // Not implemented yet.
}
