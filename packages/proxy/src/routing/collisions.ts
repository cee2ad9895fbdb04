// Runtime collision lint (diagnostic W018): pairs of HTTP routes that both match some request, where the
// precedence order lets one win. Sound by construction: a collision is reported only with a concrete witness
// request (host, path, method) that matches both routes; overlaps we cannot witness are not reported.
import type { Entrypoint } from '../model/entrypoint.js';
import {
  HostKind,
  PathKind,
  hostMatches,
  pathMatches,
  wildcardKeyOf,
  type HostPattern,
  type PathPattern,
} from './patterns.js';
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

export interface CollisionScan {
  collisions: Collision[];
  /** Pairs of entries handed to the witness search: the measure of the scan's cost. */
  comparisons: number;
}

/** For entry `i`, the indices (ascending, all above `i`) of the entries to compare it with. */
type CandidateSource = (i: number) => Iterable<number>;

function* after(list: readonly number[] | undefined, i: number): Generator<number> {
  if (list === undefined) return;
  // Lists are ascending; binary search for the first index above i.
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! <= i) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < list.length; k++) yield list[k]!;
}

/**
 * Indices (ascending, all > `i`) of the entries whose host set can intersect entry `i`'s. Exact hosts meet only
 * the same exact host and the wildcard of their parent domain; a wildcard meets only the same wildcard and the
 * exact hosts one label under its domain. Regex and host-less entries may meet anything: they are compared with
 * every entry below them, and every entry below a regex or host-less one is compared with it. Skipping the
 * other pairs cannot change the result: their witness host search (candidates checked with hostMatches) is empty.
 */
function bucketedCandidates<T>(entries: readonly RouteEntry<T>[]): CandidateSource {
  const exactByHost = new Map<string, number[]>();
  const exactByParent = new Map<string, number[]>();
  const wildcardByDomain = new Map<string, number[]>();
  const open: number[] = [];
  const push = (map: Map<string, number[]>, key: string, index: number): void => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [index]);
    else list.push(index);
  };
  entries.forEach((entry, index) => {
    switch (entry.host.kind) {
      case HostKind.Exact: {
        push(exactByHost, entry.host.key, index);
        const parent = wildcardKeyOf(entry.host.key);
        if (parent !== '') push(exactByParent, parent, index);
        break;
      }
      case HostKind.Wildcard:
        push(wildcardByDomain, entry.host.key, index);
        break;
      default:
        open.push(index);
    }
  });
  return (i) => {
    const host = entries[i]!.host;
    let lists: number[][];
    switch (host.kind) {
      case HostKind.Exact: {
        const parent = wildcardKeyOf(host.key);
        lists = [
          [...after(exactByHost.get(host.key), i)],
          [...after(parent === '' ? undefined : wildcardByDomain.get(parent), i)],
          [...after(open, i)],
        ];
        break;
      }
      case HostKind.Wildcard:
        lists = [
          [...after(wildcardByDomain.get(host.key), i)],
          [...after(exactByParent.get(host.key), i)],
          [...after(open, i)],
        ];
        break;
      default:
        return everyAfter(entries.length, i);
    }
    // The buckets are disjoint; ascending order keeps the first-found witness identical to the pairwise scan.
    const merged = lists.flat();
    merged.sort((a, b) => a - b);
    return merged;
  };
}

function* everyAfter(count: number, i: number): Generator<number> {
  for (let j = i + 1; j < count; j++) yield j;
}

function pairwiseCandidates<T>(entries: readonly RouteEntry<T>[]): CandidateSource {
  return (i) => everyAfter(entries.length, i);
}

function scan(entrypoints: readonly Entrypoint[], strategy: <T>(entries: readonly RouteEntry<T>[]) => CandidateSource): CollisionScan {
  const { entries } = compileEntries(entrypoints, () => null);
  entries.sort((a, b) => compareRoutes(a.rank, b.rank));
  const candidatesOf = strategy(entries);
  const byWinner = new Map<string, { shadowed: Set<string>; example: CollisionExample }>();
  let comparisons = 0;
  for (let i = 0; i < entries.length; i++) {
    const winner = entries[i]!;
    for (const j of candidatesOf(i)) {
      const loser = entries[j]!;
      if (loser.rank.id === winner.rank.id) continue;
      comparisons++;
      const example = witness(winner, loser);
      if (example === null) continue;
      const found = byWinner.get(winner.rank.id);
      if (found === undefined) byWinner.set(winner.rank.id, { shadowed: new Set([loser.rank.id]), example });
      else found.shadowed.add(loser.rank.id);
    }
  }
  const collisions = [...byWinner.entries()]
    .map(([winner, v]) => ({ winner, shadowed: [...v.shadowed].sort(), example: v.example }))
    .sort((a, b) => (a.winner < b.winner ? -1 : a.winner > b.winner ? 1 : 0));
  return { collisions, comparisons };
}

/**
 * Pure: the same entrypoints (in any order) give the same result. Only routes whose host sets can intersect are
 * compared, so a table of distinct exact hosts is scanned in near-linear time.
 */
export function findCollisions(entrypoints: readonly Entrypoint[]): Collision[] {
  return scan(entrypoints, bucketedCandidates).collisions;
}

/** findCollisions with the number of route pairs it compared (tests and benchmarks of its cost). */
export function scanCollisions(entrypoints: readonly Entrypoint[]): CollisionScan {
  return scan(entrypoints, bucketedCandidates);
}

/** Every pair compared: the reference the bucketed scan must agree with (tests and the benchmark's peer). */
export function scanCollisionsPairwise(entrypoints: readonly Entrypoint[]): CollisionScan {
  return scan(entrypoints, pairwiseCandidates);
}
