// `redirect_template` and `www_authenticate` values: literal text with placeholders, parsed once per route.
import type { RequestContext } from '../context.js';

export const PLACEHOLDERS = ['scheme', 'host', 'port', 'path', 'query', 'uri', 'method'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

export type TemplatePart = string | { placeholder: Placeholder };

export interface CompiledTemplate {
  parts: readonly TemplatePart[];
}

const KNOWN = new Set<string>(PLACEHOLDERS);

/** Unknown `{names}` stay literal, so a value with braces of its own survives. */
export function compileTemplate(raw: string): CompiledTemplate {
  // Characters a header value cannot carry (CR, LF, other controls) are dropped here, once, so a bad config
  // value can never make a response fail to send.
  const source = raw.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
  const parts: TemplatePart[] = [];
  let literal = '';
  const re = /\{([a-z_]+)\}/g;
  let last = 0;
  for (let m = re.exec(source); m !== null; m = re.exec(source)) {
    const name = m[1] as string;
    if (!KNOWN.has(name)) continue;
    literal += source.slice(last, m.index);
    if (literal !== '') parts.push(literal);
    literal = '';
    parts.push({ placeholder: name as Placeholder });
    last = m.index + m[0].length;
  }
  literal += source.slice(last);
  if (literal !== '') parts.push(literal);
  return { parts };
}

function value(ctx: RequestContext, name: Placeholder): string {
  switch (name) {
    case 'scheme':
      return ctx.scheme;
    case 'host':
      return ctx.host;
    case 'port':
      return String(ctx.port);
    case 'path':
      return ctx.path;
    case 'query':
      return ctx.query;
    case 'uri':
      return ctx.uri;
    case 'method':
      return ctx.req.method ?? 'GET';
  }
}

export function expandTemplate(template: CompiledTemplate, ctx: RequestContext): string {
  let out = '';
  for (const part of template.parts) out += typeof part === 'string' ? part : value(ctx, part.placeholder);
  return out;
}
