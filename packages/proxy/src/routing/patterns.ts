// Host and path patterns of one route, compiled once (regexes included) so matching never compiles anything.
import type { PathRule } from '../model/entrypoint.js';

/** Rank of a host pattern in the precedence order: lower is more specific. */
export const HostKind = { Exact: 0, Wildcard: 1, Regex: 2, Any: 3 } as const;
export type HostKind = (typeof HostKind)[keyof typeof HostKind];

/** Rank of a path rule in the precedence order: lower is more specific (Prefix ties break on length). */
export const PathKind = { Exact: 0, Prefix: 1, Regex: 2, Any: 3 } as const;
export type PathKind = (typeof PathKind)[keyof typeof PathKind];

export interface HostPattern {
  kind: HostKind;
  /** The pattern as written, lower-cased: `a.example.com`, `*.example.com`, `/re/`, or `` for any host. */
  source: string;
  /** Exact: the host; Wildcard: the domain after `*.`; Regex / Any: ``. */
  key: string;
  regex: RegExp | null;
}

export interface PathPattern {
  kind: PathKind;
  /** Exact: the path; Prefix: the prefix without a trailing slash (`/` stays `/`); Regex: its source. */
  value: string;
  regex: RegExp | null;
}

export class PatternError extends Error {}

function anchored(source: string, flags: string): RegExp {
  try {
    return new RegExp(`^(?:${source})$`, flags);
  } catch (err) {
    throw new PatternError(`invalid regular expression /${source}/: ${(err as Error).message}`);
  }
}

export function compileHostPattern(raw: string): HostPattern {
  const text = raw.trim();
  if (text.length >= 2 && text.startsWith('/') && text.endsWith('/')) {
    const source = text.slice(1, -1);
    return { kind: HostKind.Regex, source: text, key: '', regex: anchored(source, 'i') };
  }
  // Request hosts are matched without port or trailing dot, so patterns are written down the same way.
  const host = stripPort(text.toLowerCase()).replace(/\.$/, '');
  if (host === '' || host === '*') return { kind: HostKind.Any, source: '', key: '', regex: null };
  if (host.startsWith('*.')) {
    const domain = host.slice(2);
    if (domain === '' || domain.includes('*')) throw new PatternError(`invalid wildcard hostname ${raw}`);
    return { kind: HostKind.Wildcard, source: host, key: domain, regex: null };
  }
  if (host.includes('*')) throw new PatternError(`wildcard only allowed as the first label: ${raw}`);
  return { kind: HostKind.Exact, source: host, key: host, regex: null };
}

function stripPort(host: string): string {
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    return close < 0 ? host : host.slice(0, close + 1);
  }
  const colon = host.lastIndexOf(':');
  return colon >= 0 && host.indexOf(':') === colon && /^\d+$/.test(host.slice(colon + 1)) ? host.slice(0, colon) : host;
}

export const ANY_HOST: HostPattern = { kind: HostKind.Any, source: '', key: '', regex: null };
export const ANY_PATH: PathPattern = { kind: PathKind.Any, value: '', regex: null };

export function compilePathPattern(rule: PathRule | null): PathPattern {
  if (rule === null) return ANY_PATH;
  switch (rule.rule_type) {
    case 'Exact':
      return { kind: PathKind.Exact, value: rule.value, regex: null };
    case 'Prefix': {
      let value = rule.value === '' ? '/' : rule.value;
      while (value.length > 1 && value.endsWith('/')) value = value.slice(0, -1);
      if (!value.startsWith('/')) value = `/${value}`;
      return { kind: PathKind.Prefix, value, regex: null };
    }
    case 'Regex':
      return { kind: PathKind.Regex, value: rule.value, regex: anchored(rule.value, '') };
  }
}

/** `host` is already lower-cased and without port. */
export function hostMatches(pattern: HostPattern, host: string): boolean {
  switch (pattern.kind) {
    case HostKind.Exact:
      return host === pattern.key;
    case HostKind.Wildcard: {
      const dot = host.indexOf('.');
      return dot > 0 && host.slice(dot + 1) === pattern.key;
    }
    case HostKind.Regex:
      return (pattern.regex as RegExp).test(host);
    default:
      return true;
  }
}

/** Segment-aware: prefix `/api` matches `/api`, `/api/` and `/api/x`, never `/apidocs`. */
export function pathMatches(pattern: PathPattern, path: string): boolean {
  switch (pattern.kind) {
    case PathKind.Exact:
      return path === pattern.value;
    case PathKind.Prefix: {
      const v = pattern.value;
      if (v === '/') return true;
      return path.startsWith(v) && (path.length === v.length || path.charCodeAt(v.length) === 47);
    }
    case PathKind.Regex:
      return (pattern.regex as RegExp).test(path);
    default:
      return true;
  }
}

/** The domain part that a wildcard pattern would be keyed by, or `` when the host has a single label. */
export function wildcardKeyOf(host: string): string {
  const dot = host.indexOf('.');
  return dot > 0 ? host.slice(dot + 1) : '';
}
