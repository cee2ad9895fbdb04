// https_redirect and redirect / redirect_scheme / redirect_template / www_authenticate.
import type { EntrypointConfig } from '../../model/entrypoint.js';
import { plainReply, type Reply, type RequestContext } from '../context.js';
import { compileTemplate, expandTemplate, type CompiledTemplate } from './template.js';
import type { Middleware } from './types.js';

export const DEFAULT_WWW_AUTHENTICATE = 'Basic realm="proxy"';

function keepsMethod(method: string | undefined): boolean {
  return method === 'GET' || method === 'HEAD';
}

function authority(host: string, port: number, scheme: string): string {
  const defaultPort = scheme === 'https' ? 443 : 80;
  return port === defaultPort ? host : `${host}:${port}`;
}

/** Plain HTTP request → https://host[:https_redirect_port]/uri with 301 (GET/HEAD) or 308 (other methods). */
export class HttpsRedirect implements Middleware {
  readonly name = 'https_redirect';
  constructor(private readonly port: number) {}

  handle(ctx: RequestContext): Reply | null {
    if (ctx.scheme === 'https') return null;
    const location = `https://${authority(ctx.host, this.port, 'https')}${ctx.uri}`;
    return plainReply(keepsMethod(ctx.req.method) ? 301 : 308, 'redirecting to https', { location });
  }
}

/**
 * `forward`: 302 (GET/HEAD) or 307; `permanent`: 301 or 308 (307/308 keep the method and body);
 * `unauthorized`: 401 with WWW-Authenticate (and Location when a template is set).
 */
export class Redirect implements Middleware {
  readonly name = 'redirect';
  private readonly template: CompiledTemplate | null;
  private readonly challenge: CompiledTemplate;

  constructor(
    private readonly kind: 'forward' | 'permanent' | 'unauthorized',
    private readonly schemeRule: 'use_same' | 'use_http' | 'use_https',
    template: string | null,
    wwwAuthenticate: string | null,
  ) {
    this.template = template === null ? null : compileTemplate(template);
    this.challenge = compileTemplate(wwwAuthenticate ?? DEFAULT_WWW_AUTHENTICATE);
  }

  private location(ctx: RequestContext): string {
    if (this.template !== null) return expandTemplate(this.template, ctx);
    const scheme = this.schemeRule === 'use_http' ? 'http' : this.schemeRule === 'use_https' ? 'https' : ctx.scheme;
    // A scheme change drops the request's port: the other scheme's default port is meant.
    const host = scheme === ctx.scheme ? authority(ctx.host, ctx.port, scheme) : ctx.host;
    return `${scheme}://${host}${ctx.uri}`;
  }

  handle(ctx: RequestContext): Reply {
    if (this.kind === 'unauthorized') {
      const headers: Record<string, string> = { 'www-authenticate': expandTemplate(this.challenge, ctx) };
      if (this.template !== null) headers['location'] = expandTemplate(this.template, ctx);
      return plainReply(401, 'unauthorized', headers);
    }
    const same = keepsMethod(ctx.req.method);
    const status = this.kind === 'permanent' ? (same ? 301 : 308) : same ? 302 : 307;
    return plainReply(status, 'redirecting', { location: this.location(ctx) });
  }
}

export function redirectMiddlewares(config: EntrypointConfig): Middleware[] {
  const out: Middleware[] = [];
  if (config.https_redirect) out.push(new HttpsRedirect(config.https_redirect_port ?? 443));
  if (config.redirect !== null || config.redirect_template !== null) {
    out.push(
      new Redirect(config.redirect ?? 'forward', config.redirect_scheme ?? 'use_same', config.redirect_template, config.www_authenticate),
    );
  }
  return out;
}
