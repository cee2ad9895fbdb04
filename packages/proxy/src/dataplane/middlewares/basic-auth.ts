// Route basic auth: SHA-256 of the password compared in constant time with the configured lowercase hex hash.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { BasicAuthUser } from '../../model/entrypoint.js';
import { plainReply, type Reply, type RequestContext } from '../context.js';
import { compileTemplate, expandTemplate, type CompiledTemplate } from './template.js';
import { DEFAULT_WWW_AUTHENTICATE } from './redirect.js';
import type { Middleware } from './types.js';

const MAX_AUTHORIZATION = 4096;
// Compared against when the user is unknown, so a missing user costs the same as a wrong password.
const DUMMY_HASH = Buffer.alloc(32, 0xa5);

function decodeHash(hex: string): Buffer | null {
  return /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : null;
}

/** `user:password` from a Basic Authorization header, or null. */
export function parseBasic(header: string | undefined): { user: string; password: string } | null {
  if (header === undefined || header.length > MAX_AUTHORIZATION) return null;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== 'basic') return null;
  const decoded = Buffer.from(header.slice(space + 1).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export class BasicAuth implements Middleware {
  readonly name = 'basic_auth';
  private readonly users = new Map<string, Buffer | null>();
  private readonly challenge: CompiledTemplate;

  constructor(users: readonly BasicAuthUser[], wwwAuthenticate: string | null) {
    for (const u of users) this.users.set(u.username, decodeHash(u.password_hash.toLowerCase()));
    this.challenge = compileTemplate(wwwAuthenticate ?? DEFAULT_WWW_AUTHENTICATE);
  }

  handle(ctx: RequestContext): Reply | null {
    const creds = parseBasic(ctx.req.headers.authorization);
    if (creds !== null) {
      const expected = this.users.get(creds.user);
      const actual = createHash('sha256').update(creds.password, 'utf8').digest();
      const equal = timingSafeEqual(actual, expected ?? DUMMY_HASH);
      if (equal && expected !== undefined && expected !== null) {
        // Credentials stop here; the backend learns who, not how.
        ctx.upstreamStrip = ctx.upstreamStrip === null ? ['authorization', 'x-forwarded-user'] : [...ctx.upstreamStrip, 'authorization', 'x-forwarded-user'];
        (ctx.upstreamExtra ??= {})['x-forwarded-user'] = creds.user;
        return null;
      }
    }
    return plainReply(401, 'unauthorized', { 'www-authenticate': expandTemplate(this.challenge, ctx) });
  }
}
