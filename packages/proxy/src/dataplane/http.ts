// The HTTP data plane: node:http server, route lookup, the route's compiled middleware chain, and streaming
// forwarding to a backend picked by the route's upstream pool.
import http, { type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { failureReason, type BackendRef } from '../upstream/contract.js';
import { normalizeHost, type RouteTable } from '../routing/table.js';
import {
  endToEnd,
  unwrapMapped,
  type Reply,
  type RequestContext,
  type Scheme,
  type TrustedProxies,
} from './context.js';
import { addVary, chooseEncoding, compressible, createCompressor } from './middlewares/compress.js';
import { applyHeaders } from './middlewares/headers.js';
import type { DataPlaneMetrics, EntrypointSeries } from './metrics.js';
import { rewritePath, type CompiledRoute } from './routes.js';

/** Request line plus headers; larger gets 431. */
export const MAX_HEADER_BYTES = 16 * 1024;

const HOST_CHARS = /^[A-Za-z0-9.\-_:[\]]*$/;
/** `http://authority/path?query`: a server must accept it (RFC 9112 §3.2.2); its authority overrides Host. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#@]+)([/?][^#]*)?$/i;
const RETRYABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH']);
const STATUS_TEXT: Record<number, string> = {
  400: 'bad request',
  404: 'no route',
  408: 'request timeout',
  431: 'request header fields too large',
  502: 'bad gateway',
  504: 'gateway timeout',
};

/** Response carrying what the end-of-request metrics need, so no closure is made per request. */
class ProxyResponse extends http.ServerResponse {
  series: EntrypointSeries | null = null;
  startedAt = 0;
  /** The backend request in flight, cut when the client goes away first. */
  upstream: http.ClientRequest | null = null;
}

function onResponseClose(this: ProxyResponse): void {
  if (this.upstream !== null && !this.writableFinished) this.upstream.destroy();
  this.upstream = null;
  if (this.series !== null) this.series.record(this.statusCode, (performance.now() - this.startedAt) / 1000);
}

function text(status: number): string {
  return `${STATUS_TEXT[status] ?? http.STATUS_CODES[status] ?? 'error'}\n`;
}

/** The proxy's own short plain-text answer for `status`. */
function statusReply(status: number): Reply {
  return { status, headers: {}, body: text(status) };
}

export interface HttpProxyDeps {
  scheme: Scheme;
  trusted: TrustedProxies;
  agent: http.Agent;
  metrics: DataPlaneMetrics;
  /** The current table; read once per request so a swap never affects a request in flight. */
  table(): RouteTable<CompiledRoute>;
}

export class HttpProxy {
  readonly server: http.Server<typeof IncomingMessage, typeof ProxyResponse>;
  private readonly noRoute: EntrypointSeries;
  private readonly defaultPort: number;
  /** Client sockets handed over to an upgraded protocol; the HTTP server no longer tracks them. */
  private readonly upgraded = new Set<Socket>();

  constructor(private readonly deps: HttpProxyDeps) {
    this.defaultPort = deps.scheme === 'https' ? 443 : 80;
    this.noRoute = deps.metrics.forEntrypoint('');
    this.server = http.createServer(
      {
        ServerResponse: ProxyResponse,
        maxHeaderSize: MAX_HEADER_BYTES,
        keepAliveTimeout: 65_000,
        requestTimeout: 300_000,
        // Checked in context(), which lets HTTP/1.0 through without Host (Node would refuse it too).
        requireHostHeader: false,
      },
      (req, res) => this.onRequest(req, res as ProxyResponse),
    );
    this.server.headersTimeout = 30_000;
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket as Socket, head));
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.onClientError(err, socket));
  }

  private onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    if (!socket.writable || (err.code === 'ECONNRESET' && (socket as Socket).bytesWritten === 0)) {
      socket.destroy();
      return;
    }
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    this.reply(statusReply(status), null, socket as Socket);
  }

  /** Builds the request context, or returns the status of a request refused before routing. */
  private context(req: IncomingMessage): RequestContext | number {
    const headers = req.headers;
    // Framing the proxy will not guess at (request smuggling): the parser refuses most, these are the rest.
    if (headers['transfer-encoding'] !== undefined && headers['content-length'] !== undefined) return 400;
    let url = req.url ?? '/';
    let authority = headers.host;
    if (url.charCodeAt(0) !== 47 /* / */) {
      const absolute = ABSOLUTE_FORM.exec(url);
      if (absolute === null) return 400;
      authority = absolute[1];
      const rest = absolute[2];
      url = rest === undefined ? '/' : rest.charCodeAt(0) === 63 /* ? */ ? `/${rest}` : rest;
    }
    // HTTP/1.1 needs a Host; HTTP/1.0 may omit it and routes as host ``.
    if (authority === undefined && req.httpVersion !== '1.0') return 400;
    const hostHeader = authority ?? '';
    if (hostHeader.length > 255 || !HOST_CHARS.test(hostHeader)) return 400;
    const q = url.indexOf('?');
    const host = normalizeHost(hostHeader);
    let port = this.defaultPort;
    const colon = hostHeader.lastIndexOf(':');
    if (colon > hostHeader.lastIndexOf(']')) {
      const parsed = Number(hostHeader.slice(colon + 1));
      if (!Number.isInteger(parsed) || parsed <= 0 || parsed > 65535) return 400;
      port = parsed;
    }
    const peer = unwrapMapped(req.socket.remoteAddress ?? '');
    return {
      req,
      scheme: this.deps.scheme,
      host,
      authority: hostHeader,
      uri: url,
      port,
      path: q < 0 ? url : url.slice(0, q),
      query: q < 0 ? '' : url.slice(q + 1),
      peer,
      peerTrusted: this.deps.trusted.has(peer),
      upstreamExtra: null,
      upstreamStrip: null,
    };
  }

  private onRequest(req: IncomingMessage, res: ProxyResponse): void {
    res.startedAt = performance.now();
    res.on('close', onResponseClose);
    const ctx = this.context(req);
    if (typeof ctx === 'number') {
      res.series = this.noRoute;
      this.fail(res, ctx, true);
      return;
    }
    const entry = this.deps.table().match(ctx.host, ctx.path, req.method ?? 'GET');
    if (entry === null) {
      res.series = this.noRoute;
      this.fail(res, 404, false);
      return;
    }
    const route = entry.payload;
    res.series = route.series;
    this.guarded(res, null, () => this.runChain(route, ctx, res, null, null, 0));
  }

  /** Last line of defence: a bug or an unforeseen value fails this request, never the process. */
  private guarded(res: ProxyResponse | null, socket: Socket | null, work: () => void): void {
    try {
      work();
    } catch {
      if (res !== null) this.fail(res, 502, true);
      else socket?.destroy();
    }
  }

  /** Runs the chain from step `i`; synchronous until a step returns a Promise. */
  private runChain(
    route: CompiledRoute,
    ctx: RequestContext,
    res: ProxyResponse | null,
    socket: Socket | null,
    head: Buffer | null,
    i: number,
  ): void {
    const chain = route.chain;
    for (; i < chain.length; i++) {
      const out = (chain[i] as (typeof chain)[number]).handle(ctx);
      if (out === null) continue;
      if (out instanceof Promise) {
        const next = i + 1;
        out.then(
          (reply) =>
            this.guarded(res, socket, () => {
              if (reply !== null) this.reply(reply, res, socket);
              else this.runChain(route, ctx, res, socket, head, next);
            }),
          () => this.reply(statusReply(502), res, socket),
        );
        return;
      }
      this.reply(out, res, socket);
      return;
    }
    if (res !== null) this.forward(route, ctx, res, new Set<string>(), null);
    else this.forwardUpgrade(route, ctx, socket as Socket, head as Buffer);
  }

  private reply(reply: Reply, res: ProxyResponse | null, socket: Socket | null): void {
    if (res !== null) {
      if (res.headersSent) return;
      if (typeof reply.body === 'string') {
        res.writeHead(reply.status, {
          ...reply.headers,
          'content-type': 'text/plain; charset=utf-8',
          'content-length': Buffer.byteLength(reply.body),
        });
        res.end(reply.body);
      } else {
        res.writeHead(reply.status, reply.headers);
        reply.body.pipe(res);
      }
      return;
    }
    const sock = socket as Socket;
    const body = typeof reply.body === 'string' ? reply.body : text(reply.status);
    if (typeof reply.body !== 'string') reply.body.resume();
    let head = `HTTP/1.1 ${reply.status} ${http.STATUS_CODES[reply.status] ?? ''}\r\n`;
    for (const [name, value] of Object.entries(reply.headers)) {
      if (value === undefined || name === 'content-length' || name === 'content-type') continue;
      for (const v of Array.isArray(value) ? value : [value]) head += `${name}: ${v}\r\n`;
    }
    sock.end(
      `${head}Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  private fail(res: ServerResponse, status: number, close: boolean): void {
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    const body = text(status);
    const headers: OutgoingHttpHeaders = { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) };
    if (close) headers['connection'] = 'close';
    res.writeHead(status, headers);
    res.end(body);
  }

  /** End-to-end request headers for the backend, X-Forwarded-* set, route rules applied. */
  private upstreamHeaders(route: CompiledRoute, ctx: RequestContext): OutgoingHttpHeaders {
    const src = ctx.req.headers;
    const out = endToEnd(src);
    if (ctx.authority !== '') out['host'] = ctx.authority;
    const strip = ctx.upstreamStrip;
    if (strip !== null) for (const name of strip) delete out[name];
    delete out['expect']; // the client already got its 100 Continue from this server
    const priorFor = src['x-forwarded-for'];
    if (ctx.peerTrusted) {
      out['x-forwarded-for'] = priorFor === undefined ? ctx.peer : `${priorFor}, ${ctx.peer}`;
      out['x-forwarded-proto'] = src['x-forwarded-proto'] ?? ctx.scheme;
      out['x-forwarded-host'] = src['x-forwarded-host'] ?? (ctx.authority || ctx.host);
    } else {
      out['x-forwarded-for'] = ctx.peer;
      out['x-forwarded-proto'] = ctx.scheme;
      out['x-forwarded-host'] = ctx.authority || ctx.host;
    }
    if (ctx.upstreamExtra !== null) Object.assign(out, ctx.upstreamExtra);
    if (route.headers !== null) applyHeaders(out, route.headers.request);
    return out;
  }

  private affinity(route: CompiledRoute, ctx: RequestContext): string | null {
    if (route.stickyCookie === null) return null;
    const cookie = ctx.req.headers.cookie;
    if (cookie === undefined) return null;
    const at = cookie.indexOf(`${route.stickyCookie}=`);
    if (at < 0 || (at > 0 && cookie[at - 1] !== ' ' && cookie[at - 1] !== ';')) return null;
    const start = at + route.stickyCookie.length + 1;
    const end = cookie.indexOf(';', start);
    try {
      return decodeURIComponent(cookie.slice(start, end < 0 ? undefined : end).trim());
    } catch {
      return null;
    }
  }

  private target(route: CompiledRoute, ctx: RequestContext): string {
    const path = route.stripPrefix === null && route.addPrefix === null ? ctx.path : rewritePath(route, ctx.path);
    return ctx.query === '' && !ctx.uri.endsWith('?') ? path : `${path}?${ctx.query}`;
  }

  private forward(
    route: CompiledRoute,
    ctx: RequestContext,
    res: ProxyResponse,
    tried: Set<string>,
    headersIn: OutgoingHttpHeaders | null,
  ): void {
    // The client may have left while forward auth was deciding.
    if (res.destroyed) return;
    const pool = route.pool;
    const affinity = this.affinity(route, ctx);
    const backend = pool === undefined ? null : pool.pick(affinity, tried);
    if (backend === null || pool === undefined) {
      this.fail(res, 502, false);
      return;
    }
    const req = ctx.req;
    const headers = headersIn ?? this.upstreamHeaders(route, ctx);
    if (headers['host'] === undefined) headers['host'] = backend.key; // HTTP/1.0 client, HTTP/1.1 upstream
    const upstream = http.request({
      agent: this.deps.agent,
      host: backend.address,
      port: backend.port,
      method: req.method,
      path: this.target(route, ctx),
      headers,
      setHost: false,
    });
    let timedOut = false;
    let answered = false;
    const timer = setTimeout(() => {
      timedOut = true;
      upstream.destroy();
    }, route.timeoutMs);
    res.upstream = upstream;
    upstream.on('response', (backendRes: IncomingMessage) => {
      answered = true;
      clearTimeout(timer);
      pool.reportSuccess(backend);
      this.respond(route, ctx, res, backendRes, backend, affinity);
    });
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      res.upstream = null;
      if (res.destroyed && !timedOut) return;
      if (answered) {
        res.destroy();
        return;
      }
      pool.reportFailure(backend, timedOut ? 'timeout' : failureReason(err));
      // Retry another backend only when nothing of the request was consumed: connect failures of bodiless requests.
      if (!timedOut && RETRYABLE.has(err.code ?? '') && !hasBody(req) && tried.size + 1 < pool.backends.length) {
        tried.add(backend.key);
        this.forward(route, ctx, res, tried, headers);
        return;
      }
      this.fail(res, timedOut ? 504 : 502, false);
    });
    if (hasBody(req)) req.pipe(upstream);
    else upstream.end();
  }

  private respond(
    route: CompiledRoute,
    ctx: RequestContext,
    res: ProxyResponse,
    backendRes: IncomingMessage,
    backend: BackendRef,
    affinity: string | null,
  ): void {
    const status = backendRes.statusCode ?? 502;
    const src = backendRes.headers;
    const headers = endToEnd(src);
    if (route.headers !== null) applyHeaders(headers, route.headers.response);
    if (route.stickyCookie !== null && affinity !== backend.key) {
      const cookie = `${route.stickyCookie}=${encodeURIComponent(backend.key)}; Path=/; HttpOnly; SameSite=Lax`;
      const prior = headers['set-cookie'];
      headers['set-cookie'] = prior === undefined ? [cookie] : [...(Array.isArray(prior) ? prior : [String(prior)]), cookie];
    }
    backendRes.on('error', () => res.destroy());
    if (route.compress && compressible(status, src, ctx.req.method)) {
      headers['vary'] = addVary(headers['vary']);
      const encoding = chooseEncoding(ctx.req.headers['accept-encoding']);
      if (encoding !== null) {
        delete headers['content-length'];
        delete headers['accept-ranges'];
        headers['content-encoding'] = encoding;
        const etag = headers['etag'];
        if (typeof etag === 'string' && !etag.startsWith('W/')) headers['etag'] = `W/${etag}`;
        res.writeHead(status, headers);
        const compressor = createCompressor(encoding);
        compressor.on('error', () => res.destroy());
        // A client that goes away frees the compressor's buffers (and native zlib state) at once, not at GC.
        res.once('close', () => compressor.destroy());
        backendRes.pipe(compressor).pipe(res);
        return;
      }
    }
    res.writeHead(status, headers);
    backendRes.pipe(res);
  }

  /** Cuts upgraded (WebSocket) connections, which server.close() would otherwise wait for forever. */
  closeUpgraded(): void {
    for (const socket of this.upgraded) socket.destroy();
    this.upgraded.clear();
  }

  private onUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    const ctx = this.context(req);
    if (typeof ctx === 'number') {
      this.reply(statusReply(ctx), null, socket);
      return;
    }
    const entry = this.deps.table().match(ctx.host, ctx.path, req.method ?? 'GET');
    if (entry === null) {
      this.reply(statusReply(404), null, socket);
      return;
    }
    this.guarded(null, socket, () => this.runChain(entry.payload, ctx, null, socket, head, 0));
  }

  /** WebSocket (and other Upgrade) passthrough: forward the handshake, then splice the two sockets. */
  private forwardUpgrade(route: CompiledRoute, ctx: RequestContext, socket: Socket, head: Buffer): void {
    if (socket.destroyed) return;
    const pool = route.pool;
    const backend = pool === undefined ? null : pool.pick(this.affinity(route, ctx));
    if (backend === null || pool === undefined) {
      this.reply(statusReply(502), null, socket);
      return;
    }
    const headers = this.upstreamHeaders(route, ctx);
    if (headers['host'] === undefined) headers['host'] = backend.key;
    headers['connection'] = 'Upgrade';
    headers['upgrade'] = ctx.req.headers.upgrade;
    const upstream = http.request({
      host: backend.address,
      port: backend.port,
      method: ctx.req.method,
      path: this.target(route, ctx),
      headers,
      setHost: false,
      agent: false,
      timeout: route.timeoutMs,
    });
    upstream.on('timeout', () => upstream.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      pool.reportFailure(backend, failureReason(err));
      const status = err.code === 'ETIMEDOUT' ? 504 : 502;
      if (!socket.destroyed) this.reply(statusReply(status), null, socket);
    });
    upstream.on('response', (backendRes: IncomingMessage) => {
      // The backend declined the upgrade: relay its answer and close.
      this.reply(statusReply(backendRes.statusCode ?? 502), null, socket);
      backendRes.resume();
    });
    upstream.on('upgrade', (backendRes: IncomingMessage, backendSocket: Socket, backendHead: Buffer) => {
      pool.reportSuccess(backend);
      upstream.setTimeout(0);
      backendSocket.setTimeout(0);
      let out = `HTTP/1.1 ${backendRes.statusCode ?? 101} ${backendRes.statusMessage ?? 'Switching Protocols'}\r\n`;
      for (let i = 0; i < backendRes.rawHeaders.length; i += 2) out += `${backendRes.rawHeaders[i]}: ${backendRes.rawHeaders[i + 1]}\r\n`;
      socket.write(`${out}\r\n`);
      if (backendHead.length > 0) socket.write(backendHead);
      if (head.length > 0) backendSocket.write(head);
      backendSocket.on('error', () => socket.destroy());
      socket.on('close', () => backendSocket.destroy());
      backendSocket.on('close', () => socket.destroy());
      backendSocket.pipe(socket);
      socket.pipe(backendSocket);
    });
    upstream.end();
  }
}

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
