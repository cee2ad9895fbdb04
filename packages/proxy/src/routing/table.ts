// Compiles HTTP entrypoints into an immutable route table. Exact hosts are one Map lookup, wildcard hosts one
// Map lookup on the parent domain; only regex-host and host-less routes are scanned, in precedence order.
import type { Entrypoint } from '../model/entrypoint.js';
import {
  ANY_HOST,
  HostKind,
  PathKind,
  PatternError,
  compileHostPattern,
  compilePathPattern,
  hostMatches,
  pathMatches,
  wildcardKeyOf,
  type HostPattern,
  type PathPattern,
} from './patterns.js';
import { compareRoutes, type RouteRank } from './precedence.js';

export interface RouteEntry<T> {
  rank: RouteRank;
  host: HostPattern;
  path: PathPattern;
  /** Upper-case methods; null = any. */
  methods: ReadonlySet<string> | null;
  entrypoint: Entrypoint;
  payload: T;
}

export interface RouteMatch<T> {
  entry: RouteEntry<T>;
}

export interface RouteTableError {
  entrypointId: string;
  message: string;
}

export interface RouteTable<T> {
  /** `host` lower-case without port; `path` without query string; `method` upper-case. */
  match(host: string, path: string, method: string): RouteEntry<T> | null;
  readonly size: number;
  /** Entrypoints left out because a pattern did not compile. */
  readonly errors: readonly RouteTableError[];
}

function entryMatches<T>(entry: RouteEntry<T>, path: string, method: string): boolean {
  return pathMatches(entry.path, path) && (entry.methods === null || entry.methods.has(method));
}

function firstMatch<T>(list: readonly RouteEntry<T>[] | undefined, path: string, method: string): RouteEntry<T> | null {
  if (list === undefined) return null;
  for (const entry of list) if (entryMatches(entry, path, method)) return entry;
  return null;
}

function better<T>(a: RouteEntry<T> | null, b: RouteEntry<T> | null): RouteEntry<T> | null {
  if (a === null) return b;
  if (b === null) return a;
  return compareRoutes(a.rank, b.rank) <= 0 ? a : b;
}

/** Every (route, host pattern) pair of the HTTP entrypoints, or the error that excludes an entrypoint. */
export function compileEntries<T>(
  entrypoints: readonly Entrypoint[],
  payloadFor: (entrypoint: Entrypoint) => T,
): { entries: RouteEntry<T>[]; errors: RouteTableError[] } {
  const entries: RouteEntry<T>[] = [];
  const errors: RouteTableError[] = [];
  for (const ep of entrypoints) {
    if (ep.protocol !== 'Http') continue;
    let hosts: HostPattern[];
    let path: PathPattern;
    try {
      hosts = ep.config.hostnames.length === 0 ? [ANY_HOST] : ep.config.hostnames.map(compileHostPattern);
      path = compilePathPattern(ep.config.path);
    } catch (err) {
      if (err instanceof PatternError) {
        errors.push({ entrypointId: ep.id, message: err.message });
        continue;
      }
      throw err;
    }
    const methods = ep.config.methods.length === 0 ? null : new Set(ep.config.methods.map((m) => m.toUpperCase()));
    const payload = payloadFor(ep);
    const seen = new Set<string>();
    for (const host of hosts) {
      if (seen.has(host.source)) continue;
      seen.add(host.source);
      const rank: RouteRank = {
        id: ep.id,
        priority: ep.config.priority,
        hostKind: host.kind,
        hostSource: host.source,
        pathKind: path.kind,
        pathLength: path.kind === PathKind.Prefix ? path.value.length : 0,
      };
      entries.push({ rank, host, path, methods, entrypoint: ep, payload });
    }
  }
  return { entries, errors };
}

export function compileRouteTable<T>(
  entrypoints: readonly Entrypoint[],
  payloadFor: (entrypoint: Entrypoint) => T,
): RouteTable<T> {
  const { entries, errors } = compileEntries(entrypoints, payloadFor);
  entries.sort((a, b) => compareRoutes(a.rank, b.rank));
  const exact = new Map<string, RouteEntry<T>[]>();
  const wildcard = new Map<string, RouteEntry<T>[]>();
  const regex: RouteEntry<T>[] = [];
  const anyHost: RouteEntry<T>[] = [];
  const push = (map: Map<string, RouteEntry<T>[]>, key: string, entry: RouteEntry<T>): void => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [entry]);
    else list.push(entry);
  };
  // Entries are pushed in precedence order, so every bucket stays sorted.
  for (const entry of entries) {
    switch (entry.host.kind) {
      case HostKind.Exact:
        push(exact, entry.host.key, entry);
        break;
      case HostKind.Wildcard:
        push(wildcard, entry.host.key, entry);
        break;
      case HostKind.Regex:
        regex.push(entry);
        break;
      default:
        anyHost.push(entry);
    }
  }
  const frozenErrors = Object.freeze(errors);
  return Object.freeze({
    size: entries.length,
    errors: frozenErrors,
    match(host: string, path: string, method: string): RouteEntry<T> | null {
      let best = firstMatch(exact.get(host), path, method);
      if (wildcard.size > 0) {
        const key = wildcardKeyOf(host);
        if (key !== '') best = better(best, firstMatch(wildcard.get(key), path, method));
      }
      if (regex.length > 0) {
        for (const entry of regex) {
          // Regex entries are sorted, so once one cannot beat `best` none after it can.
          if (best !== null && compareRoutes(best.rank, entry.rank) <= 0) break;
          if (hostMatches(entry.host, host) && entryMatches(entry, path, method)) {
            best = entry;
            break;
          }
        }
      }
      if (anyHost.length > 0 && (best === null || compareRoutes(best.rank, anyHost[0]!.rank) > 0)) {
        best = better(best, firstMatch(anyHost, path, method));
      }
      return best;
    },
  });
}

/** Lower-cases and strips the port (IPv6 literals keep their brackets). Returns `` for an absent host. */
export function normalizeHost(hostHeader: string | undefined): string {
  if (hostHeader === undefined || hostHeader === '') return '';
  let end = hostHeader.length;
  if (hostHeader.charCodeAt(0) === 91 /* [ */) {
    const close = hostHeader.indexOf(']');
    end = close < 0 ? end : close + 1;
  } else {
    const colon = hostHeader.lastIndexOf(':');
    if (colon >= 0) end = colon;
  }
  let host = hostHeader.slice(0, end).toLowerCase();
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}
