// `GET /deployments/{id}/logs` (spec "Deployments", "Log entry"): the merged logs of a deployment's instances.
// Without `follow`: a JSON array of the last `tail` entries across instances, oldest first. With `follow=true`: a
// server-sent-events stream, one `data: <LogEntry JSON>` event per line, that rides out instance restarts (new
// instances are attached as the scheduler observes them) and ends when the client goes away, the server stops or
// the deployment has been purged. The route is exempt from the 10 s handler timeout; browsers may authenticate with `?ticket=` (stream `logs`).
//
// The pure parts (query parsing, level heuristic, timestamp order, merging) are exported for unit tests.
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from './context.js';
import { ApiProblem, badRequest, notFound } from './problem.js';
import { idParamsSchema, type IdParams } from './resource-common.js';
import { booleanQuery, integerQuery, loadDeployment, singleQuery } from './deployment-common.js';
import { HANDLER_TIMEOUT_MS } from '../server/handler-timeout.js';
import type { LogLine, LogQuery, ObservedInstance, Runtime } from '../runtime/runtime.js';
import { deploymentExists } from '../store/deployments.js';

export const DEFAULT_LOG_TAIL = 100;
export const MAX_LOG_TAIL = 10_000;
/** How often a follower looks at the scheduler's observation for new or restarted instances. */
export const FOLLOW_DISCOVERY_INTERVAL_MS = 1_000;
/** An SSE comment this often keeps proxies and load balancers from closing an idle stream. */
export const KEEP_ALIVE_INTERVAL_MS = 15_000;
/** Open follow streams per server (each holds one Docker log connection per instance); beyond: 503. */
export const MAX_LOG_FOLLOWERS = 256;

export type LogLevel = 'error' | 'warning' | 'notice' | 'info';

export interface LogEntry {
  instance: string;
  message: string;
  level: LogLevel;
  timestamp: string;
}

export interface LogRequest {
  tail: number;
  /** Unix milliseconds; null = from the start. */
  sinceMs: number | null;
  /** Instance name (or id) to read; null = every instance. */
  container: string | null;
  follow: boolean;
}

// Most severe first: a line that says `[info] retrying after [error]` is an error line.
const LEVEL_MARKERS: readonly { level: LogLevel; markers: readonly string[] }[] = [
  { level: 'error', markers: ['[error]', '[crit]', '[alert]', '[emerg]'] },
  { level: 'warning', markers: ['[warning]', '[warn]'] },
  { level: 'notice', markers: ['[notice]'] },
  { level: 'info', markers: ['[info]', 'info:'] },
];

/**
 * The level of a log line, inferred from substrings (spec "Log entry"): `[error]`, `[warning]`, `[notice]`,
 * `[info]`, `info:`, case-insensitive, plus nginx's `[warn]`, `[crit]`, `[alert]`, `[emerg]`. A line without a
 * marker is `info`: structured levels are not preserved, and stderr is not an error signal (many servers log
 * everything there).
 */
export function logLevelOf(message: string): LogLevel {
  const lower = message.toLowerCase();
  for (const { level, markers } of LEVEL_MARKERS) {
    if (markers.some((marker) => lower.includes(marker))) return level;
  }
  return 'info';
}

const RELATIVE = /^(?:\d{1,9}[smh])+$/;
const RELATIVE_PART = /(\d{1,9})([smh])/g;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

/**
 * `since` → Unix milliseconds: a relative age (`30s`, `10m`, `2h`, or combined as Docker accepts, `1h30m`)
 * counted back from `now`, or an RFC 3339 timestamp with a zone. Anything else is null.
 */
export function parseSince(text: string, now: Date): number | null {
  if (RELATIVE.test(text)) {
    let ms = 0;
    for (const [, amount, unit] of text.matchAll(RELATIVE_PART)) ms += Number(amount) * (UNIT_MS[unit ?? 's'] ?? 0);
    return now.getTime() - ms;
  }
  if (RFC3339.test(text)) {
    const ms = Date.parse(text.toUpperCase());
    return Number.isFinite(ms) ? ms : null;
  }
  return null;
}

export function parseLogRequest(query: unknown, now: Date): LogRequest {
  const tail = integerQuery(query, 'tail', { min: 0, max: MAX_LOG_TAIL }, DEFAULT_LOG_TAIL);
  const sinceText = singleQuery(query, 'since', 64);
  let sinceMs: number | null = null;
  if (sinceText !== undefined) {
    sinceMs = parseSince(sinceText, now);
    if (sinceMs === null) throw badRequest("query parameter 'since' must be a relative age (30s, 10m, 2h) or an RFC 3339 timestamp");
  }
  const container = singleQuery(query, 'container', 253) ?? null;
  if (container === '') throw badRequest("query parameter 'container' must not be empty");
  return { tail, sinceMs, container, follow: booleanQuery(query, 'follow', false) };
}

const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

/** [Unix ms of the whole second, nanoseconds within it]: Docker's RFC3339Nano drops trailing zeros, so text order is not time order. */
function timestampKey(timestamp: string): [number, number] {
  const match = TIMESTAMP.exec(timestamp);
  if (match === null) return [Date.parse(timestamp) || 0, 0];
  const second = Date.parse(`${match[1]}${match[3]}`);
  const nanos = Number((match[2] ?? '').padEnd(9, '0'));
  return [Number.isFinite(second) ? second : 0, nanos];
}

export function compareTimestamps(a: string, b: string): number {
  const [secondA, nanosA] = timestampKey(a);
  const [secondB, nanosB] = timestampKey(b);
  return secondA !== secondB ? secondA - secondB : nanosA - nanosB;
}

/** Unix ms of a timestamp (sub-millisecond digits dropped). */
export function timestampMs(timestamp: string): number {
  const [second, nanos] = timestampKey(timestamp);
  return second + Math.floor(nanos / 1e6);
}

export function toLogEntry(line: LogLine): LogEntry {
  return { instance: line.instance, message: line.message, level: logLevelOf(line.message), timestamp: line.timestamp };
}

/** The last `tail` entries of all instances, in time order (stable for equal timestamps), not before `sinceMs`. */
export function mergeLogs(perInstance: readonly (readonly LogEntry[])[], tail: number, sinceMs: number | null): LogEntry[] {
  const merged = perInstance
    .flat()
    .filter((entry) => sinceMs === null || timestampMs(entry.timestamp) >= sinceMs)
    .sort((a, b) => compareTimestamps(a.timestamp, b.timestamp));
  return tail === 0 ? [] : merged.slice(-tail);
}

/** The instances a request reads: every observed one, or the one named by `container` (name or id). */
export function selectInstances(observed: readonly ObservedInstance[], container: string | null): ObservedInstance[] {
  const readable = observed.filter((instance) => instance.state !== 'removing');
  if (container === null) return [...readable].sort((a, b) => a.name.localeCompare(b.name));
  return readable.filter((instance) => instance.name === container || instance.id === container);
}

function runtimeQuery(tail: number, sinceMs: number | null, follow: boolean): LogQuery {
  // Docker filters by whole seconds; the exact cut is made on each line's own timestamp.
  return { tail, since: sinceMs === null ? null : Math.max(0, Math.floor(sinceMs / 1000)), follow };
}

// ---------------------------------------------------------------------------------------------------------------
// Route
// ---------------------------------------------------------------------------------------------------------------

/** Aborts when the client goes away, or when the server stops (so a stop is never held by a follower). */
function responseSignal(raw: ServerResponse, stopping: AbortSignal): AbortController {
  const controller = new AbortController();
  const abort = () => controller.abort();
  raw.once('close', abort);
  stopping.addEventListener('abort', abort, { once: true });
  controller.signal.addEventListener('abort', () => stopping.removeEventListener('abort', abort), { once: true });
  return controller;
}

async function readAll(runtime: Runtime, instance: ObservedInstance, request: LogRequest, signal: AbortSignal): Promise<LogEntry[]> {
  const entries: LogEntry[] = [];
  for await (const line of runtime.logs(instance, runtimeQuery(request.tail, request.sinceMs, false), signal)) {
    entries.push(toLogEntry(line));
  }
  return entries;
}

/** One SSE event per entry; waits for the socket to drain, so a slow reader slows the Docker stream, not memory. */
class EventStream {
  constructor(
    private readonly raw: ServerResponse,
    private readonly signal: AbortSignal,
  ) {}

  async send(entry: LogEntry): Promise<void> {
    await this.write(`data: ${JSON.stringify(entry)}\n\n`);
  }

  async comment(text: string): Promise<void> {
    await this.write(`: ${text}\n\n`);
  }

  private async write(chunk: string): Promise<void> {
    if (this.signal.aborted || this.raw.destroyed) return;
    if (!this.raw.write(chunk)) await once(this.raw, 'drain', { signal: this.signal });
  }
}

interface Attachment {
  active: boolean;
  /** Timestamp of the last line sent: a re-attach resumes after it. */
  last: string | null;
}

/**
 * Follows every instance matching `request.container`: those present at the start with `tail`, those that appear
 * later from their first line, and re-attaches (after the last line sent) when a stream ends while its instance
 * still runs (a daemon restart). Runs until `signal` aborts.
 */
async function follow(
  deps: ApiDeps,
  deploymentId: string,
  /** Undefined when the deployment's runtime is not enabled here: the stream stays open and idle until purge. */
  runtime: Runtime | undefined,
  request: LogRequest,
  events: EventStream,
  signal: AbortSignal,
  log: FastifyRequest['log'],
): Promise<void> {
  const attachments = new Map<string, Attachment>();
  const startedAt = Date.now();
  const pumps = new Set<Promise<void>>();

  const pump = async (instance: ObservedInstance, attachment: Attachment, query: LogQuery, sinceMs: number | null) => {
    if (runtime === undefined) return;
    try {
      for await (const line of runtime.logs(instance, query, signal)) {
        if (attachment.last !== null && compareTimestamps(line.timestamp, attachment.last) <= 0) continue;
        if (sinceMs !== null && timestampMs(line.timestamp) < sinceMs) continue;
        attachment.last = line.timestamp;
        await events.send(toLogEntry(line));
      }
    } catch (error) {
      if (!signal.aborted) log.debug({ err: error, instance: instance.name }, 'log stream of an instance ended with an error');
    } finally {
      attachment.active = false;
    }
  };

  const attach = (instance: ObservedInstance, attachment: Attachment, query: LogQuery, sinceMs: number | null) => {
    attachment.active = true;
    const running = pump(instance, attachment, query, sinceMs);
    pumps.add(running);
    void running.finally(() => pumps.delete(running));
  };

  let firstPass = true;
  let lastKeepAlive = Date.now();
  while (!signal.aborted) {
    // Once the scheduler has purged the deployment nothing can ever log again: end the stream, as `kubectl logs -f`
    // ends when its pod is gone (a client that reconnects then gets a 404).
    if (!deploymentExists(deps.db, deploymentId)) {
      await Promise.allSettled([...pumps]);
      await events.comment('deployment deleted').catch(() => undefined);
      return;
    }
    const observed = runtime === undefined ? [] : selectInstances(deps.scheduler.instancesOf(deploymentId), request.container);
    for (const instance of observed) {
      const known = attachments.get(instance.id);
      if (known === undefined) {
        const attachment: Attachment = { active: false, last: null };
        attachments.set(instance.id, attachment);
        if (firstPass) {
          attach(instance, attachment, runtimeQuery(request.tail, request.sinceMs, true), request.sinceMs);
        } else {
          // A new instance: everything it wrote since the stream began (one second of slack for clock rounding).
          const from = Math.max(request.sinceMs ?? 0, startedAt - 1000);
          attach(instance, attachment, runtimeQuery(-1, from, true), from);
        }
      } else if (!known.active && instance.state === 'running') {
        const from = known.last === null ? startedAt : timestampMs(known.last);
        attach(instance, known, runtimeQuery(-1, from, true), request.sinceMs);
      }
    }
    // Forget instances that are gone, so a long stream over many restarts holds no stale state.
    const present = new Set(observed.map((instance) => instance.id));
    for (const [id, attachment] of attachments) if (!present.has(id) && !attachment.active) attachments.delete(id);
    firstPass = false;
    if (Date.now() - lastKeepAlive >= KEEP_ALIVE_INTERVAL_MS) {
      lastKeepAlive = Date.now();
      await events.comment('keep-alive').catch(() => undefined);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FOLLOW_DISCOVERY_INTERVAL_MS);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }
  await Promise.allSettled([...pumps]);
}

export function registerDeploymentLogRoutes(app: FastifyInstance, deps: ApiDeps): void {
  // Stopping the server ends every follower, so a log stream never holds a graceful stop.
  const stopping = new AbortController();
  app.addHook('preClose', async () => {
    stopping.abort();
  });
  let followers = 0;

  app.get<IdParams>(
    '/deployments/:id/logs',
    {
      config: { auth: { scope: 'deployments:read', streamTicket: 'logs' }, timeout: false },
      schema: { params: idParamsSchema },
    },
    async (request, reply: FastifyReply) => {
      const logRequest = parseLogRequest(request.query, deps.now());
      const record = loadDeployment(deps, request);
      const runtime = deps.scheduler.runtime(record.spec.runtime);
      const observed = deps.scheduler.instancesOf(record.id);
      if (logRequest.container !== null && selectInstances(observed, logRequest.container).length === 0) {
        throw notFound('instance', logRequest.container);
      }

      if (!logRequest.follow) {
        if (runtime === undefined) return [];
        // The route has no handler timeout (for `follow`), so a plain read gets the standard 10 s bound here.
        const controller = responseSignal(reply.raw, stopping.signal);
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, HANDLER_TIMEOUT_MS);
        try {
          const instances = selectInstances(observed, logRequest.container);
          const perInstance = await Promise.all(
            instances.map((instance) => readAll(runtime, instance, logRequest, controller.signal).catch((error: unknown) => {
              // An instance removed between the observation and the read has no logs left to show.
              request.log.debug({ err: error, instance: instance.name }, 'reading instance logs failed');
              return [];
            })),
          );
          if (timedOut) {
            throw new ApiProblem(408, `the logs could not be read within ${HANDLER_TIMEOUT_MS / 1000} s`);
          }
          return mergeLogs(perInstance, logRequest.tail, logRequest.sinceMs);
        } finally {
          clearTimeout(timer);
          controller.abort();
        }
      }

      if (followers >= MAX_LOG_FOLLOWERS) {
        reply.header('retry-after', '5');
        throw new ApiProblem(503, `too many open log streams (at most ${MAX_LOG_FOLLOWERS}); retry later`);
      }
      followers += 1;
      reply.hijack();
      const raw = reply.raw;
      // Headers set by hooks (CORS) are kept: hijacking bypasses Fastify's own header writing.
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) raw.setHeader(name, typeof value === 'number' ? String(value) : value);
      }
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        // nginx and similar proxies would otherwise buffer the stream.
        'x-accel-buffering': 'no',
      });
      raw.flushHeaders();
      const controller = responseSignal(raw, stopping.signal);
      const events = new EventStream(raw, controller.signal);
      await events.comment('connected');
      try {
        await follow(deps, record.id, runtime, logRequest, events, controller.signal, request.log);
      } catch (error) {
        if (!controller.signal.aborted) request.log.warn({ err: error, deployment: record.id }, 'log stream failed');
      } finally {
        followers -= 1;
        controller.abort();
        raw.end();
      }
    },
  );
}
