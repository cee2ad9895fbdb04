// HTTP Basic authentication of API users: SHA-256 of the received password compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiUser } from '../config/config-schema.js';

const MAX_CREDENTIALS = 1024;
/** Compared against when the user name is unknown, so both paths cost the same. */
const DUMMY_HASH = Buffer.alloc(32);

export function parseBasicHeader(header: string | undefined): { name: string; password: string } | null {
  if (header === undefined || header.length > MAX_CREDENTIALS * 2) return null;
  const match = /^Basic[ ]+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return null;
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The user whose name and password match, or null. Constant time in the password. */
export function authenticate(users: readonly ApiUser[], header: string | undefined): ApiUser | null {
  const credentials = parseBasicHeader(header);
  if (!credentials) return null;
  const received = createHash('sha256').update(credentials.password, 'utf8').digest();
  const user = users.find((candidate) => candidate.name === credentials.name);
  const expected = user ? Buffer.from(user.hash, 'hex') : DUMMY_HASH;
  const equal = expected.length === received.length && timingSafeEqual(expected, received);
  return user && equal ? user : null;
}
