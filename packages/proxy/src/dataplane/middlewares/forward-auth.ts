// Forward auth: ask an auth server with the client's headers (no body) plus X-Forwarded-Method/-Proto/-Host/
// -Uri/-For. 2xx lets the request through with the configured response headers copied onto it; anything
// else is relayed to the client as the answer (status, headers, body).
import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { ForwardAuth as ForwardAuthConfig } from '../../model/entrypoint.js';
import { endToEnd, plainReply, type Reply, type RequestContext } from '../context.js';
import type { Middleware } from './types.js';

const FORWARDED = ['x-forwarded-method', 'x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-uri', 'x-forwarded-for'] as const;

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export class ForwardAuth implements Middleware {
  readonly name = 'forward_auth';
  private readonly url: URL | null;
  private readonly copy: readonly string[];
  private readonly trustForwarded: boolean;

  constructor(
    config: ForwardAuthConfig,
    private readonly agents: { http: http.Agent; https: https.Agent },
    private readonly timeoutMs: number,
  ) {
    let url: URL | null = null;
    try {
      url = new URL(config.address);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') url = null;
    } catch {
      url = null;
    }
    this.url = url;
    this.copy = config.response_headers.map((h) => h.toLowerCase());
    this.trustForwarded = config.trust_forward_header;
  }

  /** Headers for the auth request: the client's end-to-end headers, minus Host, plus X-Forwarded-*. */
  private authHeaders(ctx: RequestContext): OutgoingHttpHeaders {
    const req = ctx.req;
    const headers = endToEnd(req.headers);
    delete headers['host'];
    delete headers['content-length'];
    delete headers['expect'];
    const own: Record<(typeof FORWARDED)[number], string> = {
      'x-forwarded-method': req.method ?? 'GET',
      'x-forwarded-proto': ctx.scheme,
      'x-forwarded-host': ctx.authority || ctx.host,
      'x-forwarded-uri': ctx.uri,
      'x-forwarded-for': ctx.peer,
    };
    for (const name of FORWARDED) {
      const client = first(req.headers[name]);
      headers[name] = this.trustForwarded && client !== undefined ? client : own[name];
    }
    return headers;
  }

  handle(ctx: RequestContext): Promise<Reply | null> {
    const url = this.url;
    if (url === null) return Promise.resolve(plainReply(502, 'forward auth misconfigured'));
    // Client copies of the headers the auth server may set never reach the backend.
    ctx.upstreamStrip = ctx.upstreamStrip === null ? this.copy : [...ctx.upstreamStrip, ...this.copy];
    return new Promise((resolve) => {
      const isHttps = url.protocol === 'https:';
      const request = (isHttps ? https : http).request(
        url,
        { method: 'GET', headers: this.authHeaders(ctx), agent: isHttps ? this.agents.https : this.agents.http, timeout: this.timeoutMs },
        (res: IncomingMessage) => {
          const status = res.statusCode ?? 502;
          if (status >= 200 && status < 300) {
            res.resume();
            for (const name of this.copy) {
              const value = res.headers[name];
              if (value !== undefined) (ctx.upstreamExtra ??= {})[name] = value;
            }
            resolve(null);
            return;
          }
          resolve({ status, headers: endToEnd(res.headers), body: res });
        },
      );
      request.on('timeout', () => request.destroy(new Error('forward auth timeout')));
      request.on('error', () => resolve(plainReply(502, 'forward auth unavailable')));
      request.end();
    });
  }
}
