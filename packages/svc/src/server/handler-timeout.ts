// Spec "Limits": a handler running longer than 10 s answers 408 (problem+json). A route opts out with
// `config: { timeout: false }` (the logs stream with `follow`). The handler keeps running to completion; its late
// reply is dropped by Fastify, so a slow write still finishes consistently.
import type { FastifyInstance } from 'fastify';
import { ApiProblem, sendProblem } from '../api/problem.js';

export const HANDLER_TIMEOUT_MS = 10_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` exempts a route from the 10-second handler timeout (long-lived streams). */
    timeout?: false;
  }
}

export function registerHandlerTimeout(app: FastifyInstance, timeoutMs: number): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config.timeout === false) return;
    const timer = setTimeout(() => {
      if (reply.sent || reply.raw.headersSent) return;
      request.log.warn({ route: request.routeOptions.url }, 'handler timed out');
      sendProblem(reply, new ApiProblem(408, `the request did not complete within ${Math.round(timeoutMs / 1000)} s`));
    }, timeoutMs);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
  });
}
