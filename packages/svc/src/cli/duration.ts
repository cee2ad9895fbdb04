// Pure time helpers for tokens.
import type { ApiRecord } from './output.js';

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** `30d`, `12h`, `90m` → milliseconds; null when malformed or zero. */
export function parseTokenDuration(raw: string): number | null {
  const match = /^([1-9][0-9]{0,5})([dhm])$/.exec(raw.trim());
  if (!match) return null;
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

export type TokenStatus = 'active' | 'revoked' | 'expired';

export function tokenStatus(token: ApiRecord, now: Date): TokenStatus {
  if (token.revoked_at !== null && token.revoked_at !== undefined) return 'revoked';
  if (typeof token.expire_at === 'string') {
    const expiry = Date.parse(token.expire_at);
    if (!Number.isNaN(expiry) && expiry <= now.getTime()) return 'expired';
  }
  return 'active';
}
