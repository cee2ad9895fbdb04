// Per-request state shared by the middlewares of a route and the forwarder. Built once per request with
// fields computed lazily where they are not always needed (client address).
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { BlockList, isIP } from 'node:net';

export type Scheme = 'http' | 'https';

/** A response the proxy generates itself (redirects, 401, 429, relayed forward-auth refusals). */
export interface Reply {
  status: number;
  headers: OutgoingHttpHeaders;
  /** Short plain text, or a stream relayed as is (forward-auth refusal bodies). */
  body: string | Readable;
}

export interface RequestContext {
  req: IncomingMessage;
  scheme: Scheme;
  /** Normalized host (lower case, no port). */
  host: string;
  /** The request's authority as sent (Host header, or the authority of an absolute-form target); `` if none. */
  authority: string;
  /** Origin-form target: path and query as received (`/a/b?x=1`). */
  uri: string;
  /** Port of the request's authority (Host header port, else the scheme default). */
  port: number;
  path: string;
  /** Query string without `?`, `` when none. */
  query: string;
  /** Transport peer, IPv4-mapped IPv6 unwrapped. */
  peer: string;
  peerTrusted: boolean;
  /** Headers to set on the upstream request, added by middlewares (forward-auth copies, X-Forwarded-User). */
  upstreamExtra: OutgoingHttpHeaders | null;
  /** Header names whose client-sent copies must not reach the upstream. */
  upstreamStrip: readonly string[] | null;
}

export function plainReply(status: number, text: string, headers: OutgoingHttpHeaders = {}): Reply {
  return { status, headers, body: `${text}\n` };
}

export function unwrapMapped(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}

/** Peers whose X-Forwarded-* headers are believed. Accepts IPs and CIDRs, v4 and v6; ignores invalid entries. */
export class TrustedProxies {
  private readonly list = new BlockList();
  readonly empty: boolean;

  constructor(entries: readonly string[]) {
    let count = 0;
    for (const raw of entries) {
      const [addr, bits] = raw.trim().split('/');
      if (addr === undefined) continue;
      const family = isIP(addr);
      if (family === 0) continue;
      const type = family === 4 ? 'ipv4' : 'ipv6';
      const prefix = bits === undefined ? (family === 4 ? 32 : 128) : Number(bits);
      if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) continue;
      this.list.addSubnet(addr, prefix, type);
      count++;
    }
    this.empty = count === 0;
  }

  has(address: string): boolean {
    if (this.empty) return false;
    const family = isIP(address);
    if (family === 0) return false;
    return this.list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/**
 * The client's address: the TCP peer, or, when the peer is a trusted proxy, the right-most X-Forwarded-For
 * entry that is not itself a trusted proxy.
 */
export function clientAddress(ctx: RequestContext, trusted: TrustedProxies): string {
  if (!ctx.peerTrusted) return ctx.peer;
  const header = ctx.req.headers['x-forwarded-for'];
  if (header === undefined) return ctx.peer;
  const hops = (Array.isArray(header) ? header.join(',') : header).split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = unwrapMapped((hops[i] as string).trim());
    if (isIP(hop) === 0) return ctx.peer;
    if (!trusted.has(hop)) return hop;
  }
  return ctx.peer;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
]);

export function isHopByHop(name: string): boolean {
  return HOP_BY_HOP.has(name) || name.startsWith('proxy-');
}

/** Names listed in a Connection header (lower case); these are hop-by-hop too. */
export function connectionListed(value: string | string[] | undefined): Set<string> | null {
  if (value === undefined) return null;
  const text = Array.isArray(value) ? value.join(',') : value;
  let out: Set<string> | null = null;
  for (const token of text.split(',')) {
    const name = token.trim().toLowerCase();
    if (name === '' || name === 'close' || name === 'keep-alive') continue;
    (out ??= new Set()).add(name);
  }
  return out;
}

/** A copy of `headers` without hop-by-hop headers (including those named by Connection). */
export function endToEnd(headers: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const listed = connectionListed(headers['connection']);
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    if (isHopByHop(name) || (listed !== null && listed.has(name))) continue;
    const value = headers[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
