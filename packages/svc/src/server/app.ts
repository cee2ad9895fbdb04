// Builds the Fastify application: error rendering, authentication, and every route module.
// No listening here, so tests can build an app on a temp database and inject requests or listen on port 0.
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/context.js';
import { ApiProblem, sendProblem } from '../api/problem.js';
import { registerAuthHook } from '../api/auth-hook.js';
import { ROUTE_MODULES } from '../api/routes.js';

/** Largest request body: a secret or config value is at most 1 MiB, plus JSON overhead. */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024 + 64 * 1024;

export interface AppOptions {
  logger: boolean | { level: string };
}

export function buildApp(deps: ApiDeps, options: AppOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Request ids and URLs are logged; bodies and Authorization headers never are.
    disableRequestLogging: false,
    maxParamLength: 200,
  });
  app.decorateRequest('principal', null);

  app.setErrorHandler((error: FastifyError | ApiProblem, request, reply) => {
    if (error instanceof ApiProblem) return sendProblem(reply, error);
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return sendProblem(reply, new ApiProblem(status, error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new ApiProblem(500, 'internal error'));
  });
  app.setNotFoundHandler((request, reply) => sendProblem(reply, new ApiProblem(404, `no route for ${request.method} ${request.url.split('?')[0]}`)));

  registerAuthHook(app, deps);
  for (const register of ROUTE_MODULES) register(app, deps);
  return app;
}
