// Runtime collision lint (diagnostic W018): pairs of HTTP routes that both match some request, where the
// precedence order lets one win. Sound by construction: a collision is reported only with a concrete witness
// request (host, path, method) that matches both routes; overlaps we cannot witness are not reported.
import type { Entrypoint } from '../model/entrypoint.js';
import { HostKind, PathKind, hostMatches, pathMatches, type HostPattern, type PathPattern } from './patterns.js';
import { compareRoutes } from './precedence.js';
import { compileEntries, type RouteEntry } from './table.js';

export interface CollisionExample {
  host: string;
  path: string;
  method: string;
}

export interface Collision {
  /** Entrypoint id that serves the overlapping requests. */
  winner: string;
  /** Entrypoint ids that lose some of their requests to `winner`, sorted. */
  shadowed: string[];
  /** A request served by `winner` that the first shadowed route also matches. */
  example: CollisionExample;
}

const FALLBACK_HOST = 'example.test';

/** A few strings a regex source plausibly matches; candidates only, every one is checked with the real regex. */
function regexSamples(source: string): string[] {
  const simplified = source
    .replace(/^\^|\$$/g, '')
    .replace(/\\d[+*]?|\[0-9\][+*]?/g, '1')
    .replace(/\\w[+*]?|\[a-z0-9-]*\][+*]?/gi, 'a')
    .replace(/\[[^\]]*\][+*]/g, 'a')
    .replace(/\.[+*]\??/g, 'a')
    .replace(/\\\./g, '.')
    .replace(/\\\//g, '/')
    .replace(/\(\?:([^)|]*)[^)]*\)\??/g, '$1')
    .replace(/\(([^)|]*)[^)]*\)\??/g, '$1')
    .replace(/[?*]/g, '')
    .replace(/\+/g, '');
  return [simplified, simplified.toLowerCase()];
}

function hostCandidates(pattern: HostPattern): string[] {
  switch (pattern.kind) {
    case HostKind.Exact:
      return [pattern.key];
    case HostKind.Wildcard:
      return [`www.${pattern.key}`, `a.${pattern.key}`];
    case HostKind.Regex:
      return regexSamples(pattern.source.slice(1, -1));
    default:
      return [];
  }
}

function pathCandidates(pattern: PathPattern): string[] {
  switch (pattern.kind) {
    case PathKind.Exact:
      return [pattern.value];
    case PathKind.Prefix:
      return [pattern.value, pattern.value === '/' ? '/x' : `${pattern.value}/x`];
    case PathKind.Regex:
      return regexSamples(pattern.value);
    default:
      return ['/'];
  }
}

function witnessHost(a: HostPattern, b: HostPattern): string | null {
  const candidates = [...hostCandidates(a), ...hostCandidates(b)];
  if (candidates.length === 0) return FALLBACK_HOST;
  for (const host of candidates) if (hostMatches(a, host) && hostMatches(b, host)) return host;
  return null;
}

function witnessPath(a: PathPattern, b: PathPattern): string | null {
  for (const path of [...pathCandidates(a), ...pathCandidates(b)]) {
    if (pathMatches(a, path) && pathMatches(b, path)) return path;
  }
  return null;
}

function witnessMethod(a: ReadonlySet<string> | null, b: ReadonlySet<string> | null): string | null {
  if (a === null && b === null) return 'GET';
  if (a === null) return [...(b as ReadonlySet<string>)].sort()[0] ?? null;
  if (b === null) return [...a].sort()[0] ?? null;
  return [...a].filter((m) => b.has(m)).sort()[0] ?? null;
}

function witness<T>(a: RouteEntry<T>, b: RouteEntry<T>): CollisionExample | null {
  const method = witnessMethod(a.methods, b.methods);
  if (method === null) return null;
  const host = witnessHost(a.host, b.host);
  if (host === null) return null;
  const path = witnessPath(a.path, b.path);
  if (path === null) return null;
  return { host, path, method };
}

/** Pure: the same entrypoints (in any order) give the same result. */
export function findCollisions(entrypoints: readonly Entrypoint[]): Collision[] {
  const { entries } = compileEntries(entrypoints, () => null);
  entries.sort((a, b) => compareRoutes(a.rank, b.rank));
  const byWinner = new Map<string, { shadowed: Set<string>; example: CollisionExample; firstShadowed: string }>();
  for (let i = 0; i < entries.length; i++) {
    const winner = entries[i]!;
    for (let j = i + 1; j < entries.length; j++) {
      const loser = entries[j]!;
      if (loser.rank.id === winner.rank.id) continue;
      const example = witness(winner, loser);
      if (example === null) continue;
      const found = byWinner.get(winner.rank.id);
      if (found === undefined) {
        byWinner.set(winner.rank.id, { shadowed: new Set([loser.rank.id]), example, firstShadowed: loser.rank.id });
      } else {
        found.shadowed.add(loser.rank.id);
      }
    }
  }
  return [...byWinner.entries()]
    .map(([winner, v]) => ({ winner, shadowed: [...v.shadowed].sort(), example: v.example }))
    .sort((a, b) => (a.winner < b.winner ? -1 : a.winner > b.winner ? 1 : 0));
}
