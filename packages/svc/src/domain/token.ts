// Token rules (spec "Tokens" and "Limits"): pure validation of a PAT request, and the token status shown by the CLI.
import { isScope, type Scope } from '../api/context.js';
import { checkLength, checkNamespace, type Violation } from './violations.js';

const TOKEN_NAME_PATTERN = /^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/;
// RFC 3339 date-time: full date, 'T' (or 't'/' '), time with optional fraction, 'Z' or a numeric offset.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

export interface TokenRequest {
  name: string;
  scopes: readonly string[];
  namespaces: readonly string[];
  expire_at: string | null;
}

export interface ValidToken {
  name: string;
  scopes: Scope[];
  namespaces: string[];
  /** Normalised to UTC `toISOString()` form, or null for no expiry. */
  expireAt: string | null;
}

/** Parses an RFC 3339 timestamp strictly (calendar-valid); null when it is not one. */
export function parseRfc3339(value: string): Date | null {
  const match = RFC3339.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 60) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  const parsed = new Date(value.replace(' ', 'T'));
  return Number.isNaN(parsed.getTime()) ? null : parsed;
}

export function validateTokenRequest(request: TokenRequest, now: Date): { token: ValidToken; violations: Violation[] } {
  const out: Violation[] = [];
  checkLength(request.name, 2, 63, 'name', 'token.name.length', out);
  if (!TOKEN_NAME_PATTERN.test(request.name)) {
    out.push({
      property_path: 'name',
      message: 'must be letters, digits, "_", "." or "-", starting and ending with a letter or digit',
      code: 'token.name.format',
    });
  }
  if (request.scopes.length === 0) {
    out.push({ property_path: 'scopes', message: 'must name at least one scope', code: 'token.scopes.empty' });
  }
  request.scopes.forEach((scope, index) => {
    if (!isScope(scope)) {
      out.push({ property_path: `scopes[${index}]`, message: `unknown scope '${scope.slice(0, 64)}'`, code: 'token.scopes.unknown' });
    }
  });
  request.namespaces.forEach((namespace, index) => checkNamespace(namespace, `namespaces[${index}]`, 'token.namespaces', out));
  let expireAt: string | null = null;
  if (request.expire_at !== null) {
    const parsed = parseRfc3339(request.expire_at);
    if (!parsed) {
      out.push({ property_path: 'expire_at', message: 'must be an RFC 3339 timestamp, e.g. 2030-01-31T12:00:00Z', code: 'token.expire_at.format' });
    } else if (parsed.getTime() <= now.getTime()) {
      out.push({ property_path: 'expire_at', message: 'must be in the future', code: 'token.expire_at.format' });
    } else {
      expireAt = parsed.toISOString();
    }
  }
  const scopes = [...new Set(request.scopes.filter(isScope))];
  const namespaces = [...new Set(request.namespaces)];
  return { token: { name: request.name, scopes, namespaces, expireAt }, violations: out };
}

export type TokenStatus = 'active' | 'revoked' | 'expired';

export function tokenStatus(token: { revoked_at: string | null; expire_at: string | null }, now: Date): TokenStatus {
  if (token.revoked_at !== null) return 'revoked';
  if (token.expire_at !== null && Date.parse(token.expire_at) <= now.getTime()) return 'expired';
  return 'active';
}

/**
 * A namespace-restricted caller may only mint tokens inside its own namespaces (no escalation to "all").
 * Returns the namespaces the new token may not have, empty when allowed.
 */
export function namespacesBeyondCaller(requested: readonly string[], caller: readonly string[]): string[] | 'all' {
  if (caller.length === 0) return [];
  if (requested.length === 0) return 'all';
  return requested.filter((ns) => !caller.includes(ns));
}
