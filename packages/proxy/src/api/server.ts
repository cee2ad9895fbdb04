// The management API over node:http (not the hot path; no framework needed). Every answer is JSON and every
// error is `{error}`: unknown paths, wrong methods, oversized or malformed bodies included.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatIssue } from '../config/checks.js';
import type { ApiConfig, ApiUser } from '../config/config-schema.js';
import { splitListenAddress } from '../config/config-schema.js';
import { parseEntrypoint } from '../config/entrypoint-schema.js';
import type { ControlPlane, WriteResult } from '../control/control-plane.js';
import type { Entrypoint } from '../model/entrypoint.js';
import { authenticate } from './auth.js';
import { corsHeaders } from './cors.js';
import { HttpError, isJsonContentType, readBody, sendError, sendJson } from './http-util.js';

export const MAX_BODY_BYTES = 1024 * 1024;
const MAX_ID_LENGTH = 200;
const READ_ONLY_MESSAGE = 'read-only role cannot perform this operation';

export interface ApiDependencies {
  config: ApiConfig;
  control: ControlPlane;
  unhealthyBackends: (entrypointId: string) => string[];
  /** Prometheus text of every series (data plane + control plane). */
  metrics: () => Promise<string>;
  log?: (line: string) => void;
}

export interface ApiServer {
  readonly server: Server;
  listen(): Promise<AddressInfo>;
  close(): Promise<void>;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE']);

export function createApiServer(deps: ApiDependencies): ApiServer {
  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000, maxHeaderSize: 16 * 1024 }, (req, res) => {
    handle(deps, req, res).catch((error: unknown) => {
      if (error instanceof HttpError) {
        if (!res.headersSent) sendError(res, error.status, error.message, { ...cors(deps, req), ...error.headers });
        return;
      }
      deps.log?.(`api: internal error on ${req.method ?? '?'} ${req.url ?? '?'}: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) sendError(res, 500, 'internal error', cors(deps, req));
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  // Malformed HTTP gets a JSON 400 too, not the bare default.
  server.on('clientError', (error: Error & { code?: string }, socket) => {
    if (!socket.writable) return socket.destroy();
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const body = JSON.stringify({ error: tooLarge ? 'request headers too large' : 'malformed HTTP request' });
    socket.end(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });
  return {
    server,
    listen: () =>
      new Promise((resolve, reject) => {
        const target = splitListenAddress(deps.config.listen_address);
        if (!target) return reject(new Error(`invalid api.listen_address ${deps.config.listen_address}`));
        server.once('error', reject);
        server.listen(target.port, target.host, () => {
          server.off('error', reject);
          resolve(server.address() as AddressInfo);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

function cors(deps: ApiDependencies, req: IncomingMessage, preflight = false): Record<string, string> {
  return corsHeaders(req.headers.origin, deps.config.cors_origins, preflight);
}

async function handle(deps: ApiDependencies, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const method = req.method ?? 'GET';
  // The path as sent (no URL parsing: `//x` must not turn into a host); query strings are ignored.
  const rawPath = (req.url ?? '/').split('?')[0] ?? '/';
  const path = rawPath.length > 1 ? rawPath.replace(/\/+$/, '') : rawPath;
  const headers = cors(deps, req);

  if (method === 'OPTIONS') {
    res.writeHead(204, { ...cors(deps, req, true), 'content-length': '0' });
    res.end();
    return;
  }
  if (path === '/health' && (method === 'GET' || method === 'HEAD')) {
    sendJson(res, 200, { status: 'ok' }, headers);
    return;
  }
  const user = authenticate(deps.config.users, req.headers.authorization);
  if (!user) {
    req.resume();
    sendError(res, 401, 'missing or invalid credentials', { ...headers, 'www-authenticate': 'Basic realm="proxy"' });
    return;
  }
  if (WRITE_METHODS.has(method) && user.role !== 'admin') {
    req.resume();
    sendError(res, 403, READ_ONLY_MESSAGE, headers);
    return;
  }
  const route = matchRoute(method, path);
  if (route.kind === 'not-found') {
    req.resume();
    sendError(res, 404, `no such path: ${path.slice(0, 200)}`, headers);
    return;
  }
  if (route.kind === 'method-not-allowed') {
    req.resume();
    sendError(res, 405, `method ${method} not allowed on ${path}`, { ...headers, allow: route.allow });
    return;
  }
  await route.handler(deps, { req, res, user, headers, id: route.id });
}

interface Context {
  req: IncomingMessage;
  res: ServerResponse;
  user: ApiUser;
  headers: Record<string, string>;
  id: string;
}

type Handler = (deps: ApiDependencies, ctx: Context) => Promise<void> | void;

type RouteMatch =
  | { kind: 'ok'; handler: Handler; id: string }
  | { kind: 'not-found' }
  | { kind: 'method-not-allowed'; allow: string };

function matchRoute(method: string, path: string): RouteMatch {
  const get = method === 'HEAD' ? 'GET' : method;
  const table: { pattern: RegExp; handlers: Partial<Record<string, Handler>> }[] = [
    { pattern: /^\/me$/, handlers: { GET: getMe } },
    { pattern: /^\/entrypoints$/, handlers: { GET: listEntrypoints, POST: createEntrypoint } },
    { pattern: /^\/entrypoints\/([^/]+)$/, handlers: { GET: getEntrypoint, PUT: replaceEntrypoint, DELETE: deleteEntrypoint } },
    { pattern: /^\/providers$/, handlers: { GET: listProviders } },
    { pattern: /^\/diagnostics$/, handlers: { GET: getDiagnostics } },
    { pattern: /^\/metrics$/, handlers: { GET: getMetrics } },
  ];
  for (const { pattern, handlers } of table) {
    const match = pattern.exec(path);
    if (!match) continue;
    const handler = handlers[get];
    const raw = match[1] ?? '';
    let id = raw;
    try {
      id = decodeURIComponent(raw);
    } catch {
      return { kind: 'not-found' };
    }
    if (id.length > MAX_ID_LENGTH) return { kind: 'not-found' };
    if (!handler) return { kind: 'method-not-allowed', allow: [...Object.keys(handlers), 'OPTIONS'].join(', ') };
    return { kind: 'ok', handler, id };
  }
  return { kind: 'not-found' };
}

function entrypointView(deps: ApiDependencies, entrypoint: Entrypoint): Entrypoint & { unhealthy_backends: string[]; diagnostics: unknown[] } {
  let unhealthy: string[] = [];
  try {
    unhealthy = deps.unhealthyBackends(entrypoint.id);
  } catch {
    unhealthy = [];
  }
  return { ...entrypoint, unhealthy_backends: unhealthy, diagnostics: deps.control.snapshot().byCandidate.get(entrypoint.id) ?? [] };
}

const getMe: Handler = (_deps, { res, user, headers }) => sendJson(res, 200, { name: user.name, role: user.role }, headers);

const listEntrypoints: Handler = (deps, { res, headers }) =>
  sendJson(res, 200, deps.control.snapshot().entrypoints.map((entrypoint) => entrypointView(deps, entrypoint)), headers);

const getEntrypoint: Handler = (deps, { res, headers, id }) => {
  const entrypoint = deps.control.get(id);
  if (!entrypoint) return sendError(res, 404, `unknown entrypoint ${id}`, headers);
  sendJson(res, 200, entrypointView(deps, entrypoint), headers);
};

const listProviders: Handler = (deps, { res, headers }) => sendJson(res, 200, { providers: deps.control.providers() }, headers);

const getDiagnostics: Handler = (deps, { res, headers }) => sendJson(res, 200, deps.control.snapshot().report, headers);

const getMetrics: Handler = async (deps, { res, req, headers }) => {
  const text = await deps.metrics();
  res.writeHead(200, { ...headers, 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : text);
};

/** Content-Type, size, JSON and the shared entrypoint validation, in that order (415, 413, 400, 422). */
async function readEntrypointBody(ctx: Context): Promise<Entrypoint> {
  if (!isJsonContentType(ctx.req.headers['content-type'])) {
    ctx.req.resume();
    throw new HttpError(415, 'Content-Type must be application/json');
  }
  const text = await readBody(ctx.req, MAX_BODY_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, `malformed JSON: ${error instanceof Error ? error.message : 'parse error'}`);
  }
  const result = parseEntrypoint(body, { source: 'api', requireCoreConfigFields: true });
  if (!result.entrypoint) throw new HttpError(422, result.issues.map(formatIssue).join('; '));
  return result.entrypoint;
}

/** A state file that cannot be written is a server fault (500) that changed nothing; say so without internals. */
function persisting(write: () => WriteResult): WriteResult {
  try {
    return write();
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? ` (${String(error.code)})` : '';
    throw new HttpError(500, `cannot write the API state file${code}; nothing was changed`);
  }
}

function answerWrite(deps: ApiDependencies, ctx: Context, result: WriteResult, status: number): void {
  if (!result.ok) return sendError(ctx.res, result.status, result.error, ctx.headers);
  if (status === 204) {
    ctx.res.writeHead(204, { ...ctx.headers, 'cache-control': 'no-store' });
    ctx.res.end();
    return;
  }
  deps.log?.(`api: ${ctx.user.name} ${ctx.req.method ?? ''} ${result.entrypoint.id}`);
  sendJson(ctx.res, status, result.entrypoint, status === 201 ? { ...ctx.headers, location: `/entrypoints/${encodeURIComponent(result.entrypoint.id)}` } : ctx.headers);
}

const createEntrypoint: Handler = async (deps, ctx) => {
  const entrypoint = await readEntrypointBody(ctx);
  answerWrite(deps, ctx, persisting(() => deps.control.create(entrypoint)), 201);
};

const replaceEntrypoint: Handler = async (deps, ctx) => {
  // Ownership first: a PUT on a provider-owned or unknown id fails the same way whatever the body is.
  const refused = deps.control.writableCheck(ctx.id);
  if (refused) {
    ctx.req.resume();
    return sendError(ctx.res, refused.status, refused.error, ctx.headers);
  }
  const entrypoint = await readEntrypointBody(ctx);
  answerWrite(deps, ctx, persisting(() => deps.control.replace(ctx.id, entrypoint)), 200);
};

const deleteEntrypoint: Handler = (deps, ctx) => {
  ctx.req.resume();
  const result = persisting(() => deps.control.remove(ctx.id));
  if (result.ok) deps.log?.(`api: ${ctx.user.name} DELETE ${ctx.id}`);
  answerWrite(deps, ctx, result, 204);
};
