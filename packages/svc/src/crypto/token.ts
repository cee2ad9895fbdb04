// Bearer tokens (DESIGN.md): `svc_pat_` + 64 lowercase hex (32 random bytes) for sessions and PATs alike.
// Only the SHA-256 is stored; a fast hash is right here because the token itself carries 256 bits of entropy.
import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_PREFIX = 'svc_pat_';
const TOKEN_PATTERN = /^svc_pat_[0-9a-f]{64}$/;
export const TOKEN_PREFIX_LENGTH = 12;

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('hex');
}

export function isWellFormedToken(value: string): boolean {
  return TOKEN_PATTERN.test(value);
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** What is stored in clear for display: the first 12 characters (`svc_pat_` + 4 hex). */
export function tokenDisplayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX_LENGTH);
}
