// Builds the Fastify application: error rendering, CORS, the handler timeout, authentication, and every route
// module. No listening here, so tests can build an app on a temp database and inject requests.
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { ApiDeps, RouteAuth } from '../api/context.js';
import { ApiProblem, sendProblem } from '../api/problem.js';
import { UnreadableDeploymentError } from '../store/deployments.js';
import { registerAuthHook } from '../api/auth-hook.js';
import { KdfBusyError } from '../crypto/password.js';
import { ROUTE_MODULES } from '../api/routes.js';
import { registerCors } from './cors.js';
import { HANDLER_TIMEOUT_MS, registerHandlerTimeout } from './handler-timeout.js';
import type { LogLevel } from './log-level.js';

/** Largest request body: a secret or config value is at most 1 MiB, plus JSON overhead (escaping can double it). */
export const BODY_LIMIT_BYTES = 2 * 1024 * 1024 + 64 * 1024;

/** A whole request, headers and up to 2 MiB of body, must arrive within this. */
export const REQUEST_RECEIVE_TIMEOUT_MS = 30_000;

export interface AppOptions {
  /** `false` disables logging (in-process unit tests). */
  logLevel: LogLevel | false;
  /** Defaults to the spec's 10 s; tests shorten it. */
  handlerTimeoutMs?: number;
}

/** The URL as logged: query values of credentials (`?ticket=` for streams, `?token=`) are masked. */
export function redactUrl(url: string): string {
  return url.replace(/([?&](?:ticket|token|access_token)=)[^&#]*/gi, '$1[REDACTED]');
}

/**
 * One access-log line per request instead of Fastify's two, at `debug`: like Nomad, Traefik and Caddy, access
 * logging is opt-in, and at the default `info` the log holds start-up, shutdown, warnings and errors.
 */
class AccessLog extends LogController {
  override incomingRequest(): void {
    // Only the completion line is written.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.debug(line, 'request completed');
  }
}

function loggerOptions(level: LogLevel | false): FastifyServerOptions['logger'] {
  if (level === false) return false;
  return {
    level,
    // Headers are not serialised at all (only method, url, addresses); redaction is a second guard in case a
    // future serializer adds them. Bodies are never logged.
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-svc-signature"]'], censor: '[REDACTED]' },
    serializers: {
      req(request: { method: string; url: string; ip?: string }) {
        return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
      },
    },
  };
}

/** One registered route as declared: what the authorisation matrix and the bad-input tests iterate over. */
export interface RouteInfo {
  method: string;
  url: string;
  auth: RouteAuth | undefined;
  timeout: false | undefined;
}

const ROUTE_TABLES = new WeakMap<FastifyInstance, RouteInfo[]>();

/** Every route registered on an app built by buildApp, in registration order. */
export function registeredRoutes(app: FastifyInstance): readonly RouteInfo[] {
  return ROUTE_TABLES.get(app) ?? [];
}

export function buildApp(deps: ApiDeps, options: AppOptions): FastifyInstance {
  const app = Fastify({
    logger: loggerOptions(options.logLevel),
    bodyLimit: BODY_LIMIT_BYTES,
    routerOptions: { maxParamLength: 200 },
    // Every route is declared explicitly with its scope; an implicit HEAD twin would be one more route to map.
    exposeHeadRoutes: false,
    return503OnClosing: true,
    logController: new AccessLog(),
    // A client that trickles its request (slowloris) is cut after this (Node checks every 30 s, so within 30-60 s
    // instead of Node's default 300 s); responses, such as log streams, are not limited by it.
    requestTimeout: REQUEST_RECEIVE_TIMEOUT_MS,
  });
  app.decorateRequest('principal', null);
  const routes: RouteInfo[] = [];
  ROUTE_TABLES.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      routes.push({ method, url: route.url, auth: route.config?.auth, timeout: route.config?.timeout });
    }
  });

  // An empty body with Content-Type: application/json counts as "no body" (e.g. POST /logout from some clients).
  app.removeContentTypeParser('application/json');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    return parseJson(request, text, done);
  });

  app.setErrorHandler((error: FastifyError | ApiProblem, request, reply) => {
    if (error instanceof ApiProblem) return sendProblem(reply, error);
    if (error instanceof UnreadableDeploymentError) {
      // A row written by hand or by another version: a clear 500 naming the deployment (never its spec).
      request.log.error({ deployment: error.deploymentId, reason: error.reason }, 'unreadable deployment row');
      return sendProblem(reply, new ApiProblem(500, error.message));
    }
    if (error instanceof KdfBusyError) {
      return sendProblem(reply.header('Retry-After', '1'), new ApiProblem(503, 'too many logins in progress; retry shortly'));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return sendProblem(reply, new ApiProblem(status, error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(reply, new ApiProblem(500, 'internal error'));
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, new ApiProblem(404, `no route for ${request.method} ${request.url.split('?')[0]?.slice(0, 200)}`)),
  );

  registerCors(app, deps.config.cors_origins);
  registerHandlerTimeout(app, options.handlerTimeoutMs ?? HANDLER_TIMEOUT_MS);
  registerAuthHook(app, deps);
  for (const register of ROUTE_MODULES) register(app, deps);
  return app;
}
