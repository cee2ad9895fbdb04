// One HTTP POST per attempt, through one shared undici Agent: keep-alive connections are reused per origin,
// redirects are never followed (undici's `request` only follows them with a redirect interceptor, which is not
// installed), every attempt has one overall time limit, and every new connection goes through the guarded
// lookup (target.ts).
import { Agent, request } from 'undici';
import { outcomeOfStatus, type AttemptOutcome } from './policy.js';
import { guardedLookup, refusedUrlReason, type Resolver, systemResolver } from './target.js';

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface Sender {
  send(input: SendRequest, signal?: AbortSignal): Promise<AttemptOutcome>;
  close(): Promise<void>;
}

/** A receiver's reply is not used; reading more than this of it is wasted work (the rest is discarded). */
const RESPONSE_BODY_LIMIT_BYTES = 64 * 1024;

export function createSender(options: { attemptTimeoutMs: number; resolver?: Resolver }): Sender {
  const timeout = options.attemptTimeoutMs;
  const agent = new Agent({
    connect: { timeout, lookup: guardedLookup(options.resolver ?? systemResolver) },
    headersTimeout: timeout,
    bodyTimeout: timeout,
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 30_000,
  });
  return {
    async send(input, signal) {
      const refused = refusedUrlReason(input.url);
      if (refused) return { kind: 'failed', error: refused };
      // One controller and one timer per attempt (AbortSignal.timeout + AbortSignal.any cost more per request).
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeout);
      const interrupt = () => controller.abort();
      signal?.addEventListener('abort', interrupt, { once: true });
      try {
        const response = await request(input.url, {
          dispatcher: agent,
          method: 'POST',
          headers: input.headers,
          body: input.body,
          signal: controller.signal,
        });
        const location = response.headers.location;
        await response.body.dump({ limit: RESPONSE_BODY_LIMIT_BYTES }).catch(() => undefined);
        return outcomeOfStatus(response.statusCode, typeof location === 'string' ? location : null);
      } catch (error) {
        if (signal?.aborted) return { kind: 'interrupted' };
        if (timedOut) return { kind: 'failed', error: `timed out after ${timeout} ms` };
        return { kind: 'failed', error: describe(error) };
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', interrupt);
      }
    },
    async close() {
      await agent.destroy().catch(() => undefined);
    },
  };
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return 'request failed';
  const cause = error.cause instanceof Error ? error.cause : null;
  // undici wraps socket errors; the refused-address reason is in the cause.
  const root = cause ?? error;
  const code = (root as { code?: unknown }).code;
  return typeof code === 'string' && !root.message.includes(code) ? `${code}: ${root.message}` : root.message;
}
