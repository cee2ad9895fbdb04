// `GET /deployments/{id}/exec` (spec "Exec endpoint", DESIGN.md "Exec"): a WebSocket that runs a command inside a
// running instance. Query: `command` (repeatable; default `/bin/sh`), `tty`, `container`, `cols`, `rows`.
// Frames are JSON text. Client: {type:"stdin", data:<base64>}, {type:"resize", cols, rows}, {type:"stdin_close"}.
// Server: {type:"stdout"|"stderr", data:<base64>}, {type:"exit", code:<int|null>}, {type:"error", message}.
//
// The upgrade request goes through Fastify's own routing (server 'upgrade' → app.routing with a response bound to
// the socket), so the auth hook, scope `admin` and `?ticket=` (stream `exec`) apply exactly as on any route, and
// every refusal is an ordinary problem+json HTTP answer before the handshake. Checks, in order: 401/403 (auth),
// 400 (id), 404 unknown deployment, 403 namespace, 501 disabled (`[server.exec] enabled`), 400 query,
// 426 not a WebSocket upgrade, 404 unknown `container`, 409 no running instance, 503 too many open sessions.
import { ServerResponse, type IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, WebSocket, type RawData } from 'ws';
import type { ApiDeps } from './context.js';
import { ApiProblem, badRequest, notFound } from './problem.js';
import { idParamsSchema, type IdParams } from './resource-common.js';
import { booleanQuery, integerQuery, loadDeployment, repeatedQuery, singleQuery } from './deployment-common.js';
import type { ExecSession, ObservedInstance } from '../runtime/runtime.js';

export const DEFAULT_EXEC_COMMAND: readonly string[] = ['/bin/sh'];
/** Largest client frame: a base64 stdin chunk of 512 KiB plus JSON. */
export const MAX_EXEC_FRAME_BYTES = 1024 * 1024;
/** A peer that answers no ping for this long is gone (a laptop closed mid-session). */
export const EXEC_PING_INTERVAL_MS = 30_000;
/** Open exec sessions per server; beyond: 503. */
export const MAX_EXEC_SESSIONS = 64;
/** Output is paused while this much is queued for a slow client. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
const MAX_TERMINAL_SIZE = 10_000;

export interface ExecRequest {
  command: string[];
  tty: boolean;
  container: string | null;
  cols?: number;
  rows?: number;
}

export type ClientFrame =
  | { type: 'stdin'; data: Buffer }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'stdin_close' };

export type ServerFrame =
  | { type: 'stdout' | 'stderr'; data: string }
  | { type: 'exit'; code: number | null }
  | { type: 'error'; message: string };

export function parseExecRequest(query: unknown): ExecRequest {
  const command = repeatedQuery(query, 'command', 256, 8192);
  if (command.length > 0 && command[0] === '') throw badRequest("the first 'command' value (the program) must not be empty");
  const container = singleQuery(query, 'container', 253) ?? null;
  if (container === '') throw badRequest("query parameter 'container' must not be empty");
  const request: ExecRequest = {
    command: command.length > 0 ? command : [...DEFAULT_EXEC_COMMAND],
    tty: booleanQuery(query, 'tty', false),
    container,
  };
  const cols = integerQuery(query, 'cols', { min: 1, max: MAX_TERMINAL_SIZE });
  const rows = integerQuery(query, 'rows', { min: 1, max: MAX_TERMINAL_SIZE });
  if ((cols === undefined) !== (rows === undefined)) throw badRequest("query parameters 'cols' and 'rows' go together");
  if (cols !== undefined && rows !== undefined) {
    request.cols = cols;
    request.rows = rows;
  }
  return request;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function isSize(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_TERMINAL_SIZE;
}

/** One text frame from the client → a known frame, or a reason it is refused. */
export function parseClientFrame(text: string): ClientFrame | { invalid: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { invalid: 'frame is not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { invalid: 'frame is not a JSON object' };
  const frame = value as Record<string, unknown>;
  switch (frame.type) {
    case 'stdin':
      if (typeof frame.data !== 'string' || frame.data.length % 4 !== 0 || !BASE64.test(frame.data)) {
        return { invalid: 'stdin frame needs base64 data' };
      }
      return { type: 'stdin', data: Buffer.from(frame.data, 'base64') };
    case 'resize':
      if (!isSize(frame.cols) || !isSize(frame.rows)) return { invalid: `resize frame needs integer cols and rows from 1 to ${MAX_TERMINAL_SIZE}` };
      return { type: 'resize', cols: frame.cols, rows: frame.rows };
    case 'stdin_close':
      return { type: 'stdin_close' };
    default:
      return { invalid: 'frame type must be stdin, resize or stdin_close' };
  }
}

/** The running instance a request targets: the named one (name or id), else the first running one by name. */
export function execTarget(observed: readonly ObservedInstance[], container: string | null): { instance: ObservedInstance } | { problem: 'unknown' | 'not_running' } {
  const candidates = container === null ? [...observed] : observed.filter((i) => i.name === container || i.id === container);
  if (candidates.length === 0 && container !== null) return { problem: 'unknown' };
  const running = candidates.filter((i) => i.state === 'running').sort((a, b) => a.name.localeCompare(b.name));
  const first = running[0];
  return first === undefined ? { problem: 'not_running' } : { instance: first };
}

interface PendingUpgrade {
  socket: Duplex;
  head: Buffer;
  upgraded: boolean;
}

function send(ws: WebSocket, frame: ServerFrame): void {
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
}

async function waitForBuffer(ws: WebSocket): Promise<void> {
  while (ws.readyState === WebSocket.OPEN && ws.bufferedAmount > MAX_BUFFERED_BYTES) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type Log = { debug(o: object, m: string): void; info(o: object, m: string): void };

/** Frames that arrive while the exec is still starting are kept (up to a bound) and applied once it runs. */
const MAX_EARLY_BYTES = 4 * 1024 * 1024;

class ClientFrames {
  private handler: ((frame: ClientFrame) => void) | null = null;
  private early: ClientFrame[] = [];
  private earlyBytes = 0;

  constructor(private readonly ws: WebSocket) {
    ws.on('message', (raw: RawData, isBinary: boolean) => {
      if (isBinary) {
        send(ws, { type: 'error', message: 'frames must be JSON text' });
        return;
      }
      const frame = parseClientFrame(raw.toString());
      if ('invalid' in frame) {
        send(ws, { type: 'error', message: frame.invalid });
        return;
      }
      if (this.handler !== null) {
        this.handler(frame);
        return;
      }
      this.earlyBytes += frame.type === 'stdin' ? frame.data.length : 16;
      if (this.earlyBytes > MAX_EARLY_BYTES) {
        send(this.ws, { type: 'error', message: 'too much input before the command started' });
        this.ws.close(1009, 'input too large');
        return;
      }
      this.early.push(frame);
    });
  }

  deliverTo(handler: (frame: ClientFrame) => void): void {
    this.handler = handler;
    for (const frame of this.early.splice(0)) handler(frame);
  }
}

/** Pumps one exec session over one WebSocket until the command ends or either side goes away. */
async function runSession(ws: WebSocket, frames: ClientFrames, session: ExecSession, tty: boolean, log: Log): Promise<void> {
  ws.once('close', () => session.close());
  // Frames apply in order: input sent after a resize reaches the command after the terminal has its new size.
  let applied: Promise<void> = Promise.resolve();
  frames.deliverTo((frame) => {
    applied = applied.then(async () => {
      if (frame.type === 'stdin') {
        if (session.stdin.writable) session.stdin.write(frame.data);
      } else if (frame.type === 'stdin_close') {
        session.stdin.end();
      } else if (tty) {
        await session.resize(frame.cols, frame.rows).catch((error: unknown) => log.debug({ err: error }, 'exec resize failed'));
      }
    });
  });

  for await (const chunk of session.output) {
    if (ws.readyState !== WebSocket.OPEN) break;
    send(ws, { type: chunk.stream, data: chunk.data.toString('base64') });
    await waitForBuffer(ws);
  }
  if (ws.readyState !== WebSocket.OPEN) {
    session.close();
    return;
  }
  // null when Docker cannot tell (documented in docs/svc/api.md); the CLI turns it into exit code 1.
  const code = await session.exitCode();
  log.info({ exit_code: code }, 'exec session ended');
  send(ws, { type: 'exit', code });
  ws.close(1000, 'exited');
  session.close();
}

export function registerExecRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_EXEC_FRAME_BYTES });
  const pending = new WeakMap<IncomingMessage, PendingUpgrade>();

  // Every upgrade request is dispatched through the router like a plain request; only the exec handler completes
  // a handshake. Any other answer (401, 404, 501, ...) is written to the socket, which is then closed.
  app.server.on('upgrade', (rawRequest: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!(socket instanceof Socket)) {
      socket.destroy();
      return;
    }
    const upgrade: PendingUpgrade = { socket, head, upgraded: false };
    pending.set(rawRequest, upgrade);
    const rawResponse = new ServerResponse(rawRequest);
    rawResponse.shouldKeepAlive = false;
    rawResponse.assignSocket(socket);
    rawResponse.once('finish', () => {
      if (!upgrade.upgraded) socket.destroy();
    });
    socket.once('error', () => socket.destroy());
    app.routing(rawRequest, rawResponse);
  });

  // A stop never waits on a session: peers get a 1001 close, and whoever does not answer it is cut shortly after.
  app.addHook('preClose', async () => {
    for (const client of wss.clients) client.close(1001, 'server stopping');
    wss.close();
    const cut = setTimeout(() => {
      for (const client of wss.clients) client.terminate();
    }, 1_000);
    cut.unref();
  });

  app.get<IdParams>(
    '/deployments/:id/exec',
    { config: { auth: { scope: 'admin', streamTicket: 'exec' }, timeout: false }, schema: { params: idParamsSchema } },
    async (request, reply) => {
      const record = loadDeployment(deps, request);
      if (!deps.config.server.exec.enabled) {
        throw new ApiProblem(501, 'exec is disabled on this server; set [server.exec] enabled = true in config.toml');
      }
      const execRequest = parseExecRequest(request.query);
      const upgrade = pending.get(request.raw);
      if (upgrade === undefined) {
        reply.header('upgrade', 'websocket');
        throw new ApiProblem(426, 'this endpoint is a WebSocket: send an Upgrade: websocket request');
      }
      const runtime = deps.scheduler.runtime(record.spec.runtime);
      const target = execTarget(deps.scheduler.instancesOf(record.id), execRequest.container);
      if ('problem' in target) {
        if (target.problem === 'unknown') throw notFound('instance', execRequest.container ?? '');
        throw new ApiProblem(409, `deployment '${record.id}' has no running instance to exec into`);
      }
      if (runtime === undefined) throw new ApiProblem(409, `runtime '${record.spec.runtime}' is not enabled on this server`);

      if (wss.clients.size >= MAX_EXEC_SESSIONS) {
        reply.header('retry-after', '5');
        throw new ApiProblem(503, `too many open exec sessions (at most ${MAX_EXEC_SESSIONS}); retry later`);
      }
      upgrade.upgraded = true;
      reply.hijack();
      const log = request.log;
      wss.handleUpgrade(request.raw, upgrade.socket, upgrade.head, (ws) => {
        ws.on('error', (error) => log.debug({ err: error }, 'exec WebSocket error'));
        const frames = new ClientFrames(ws);
        let alive = true;
        ws.on('pong', () => {
          alive = true;
        });
        const heartbeat = setInterval(() => {
          if (!alive) ws.terminate();
          alive = false;
          ws.ping();
        }, EXEC_PING_INTERVAL_MS);
        ws.once('close', () => clearInterval(heartbeat));
        log.info({ deployment: record.id, instance: target.instance.name, user: request.principal?.username }, 'exec session started');
        void (async () => {
          let session: ExecSession;
          try {
            session = await runtime.exec(target.instance, {
              command: execRequest.command,
              tty: execRequest.tty,
              ...(execRequest.cols !== undefined && execRequest.rows !== undefined ? { cols: execRequest.cols, rows: execRequest.rows } : {}),
            });
          } catch (error) {
            send(ws, { type: 'error', message: error instanceof Error ? error.message : 'exec failed' });
            ws.close(1011, 'exec failed');
            return;
          }
          if (ws.readyState !== WebSocket.OPEN) {
            session.close();
            return;
          }
          try {
            await runSession(ws, frames, session, execRequest.tty, log);
          } catch (error) {
            log.debug({ err: error }, 'exec session ended with an error');
            send(ws, { type: 'error', message: 'exec session failed' });
            ws.close(1011, 'exec failed');
            session.close();
          }
        })();
      });
    },
  );
}
