// The one ordering of routes: priority, then host specificity, then path specificity, then id.
import { PathKind, type HostKind } from './patterns.js';

export interface RouteRank {
  id: string;
  priority: number;
  hostKind: HostKind;
  /** The host pattern as written; only breaks ties between entries of the same route. */
  hostSource: string;
  pathKind: PathKind;
  /** Length of the Prefix (longer is more specific); 0 for other kinds. */
  pathLength: number;
}

/** Negative when `a` wins over `b`. A total order: 0 only for identical ranks. */
export function compareRoutes(a: RouteRank, b: RouteRank): number {
  if (a.priority !== b.priority) return a.priority > b.priority ? -1 : 1;
  if (a.hostKind !== b.hostKind) return a.hostKind - b.hostKind;
  if (a.pathKind !== b.pathKind) return a.pathKind - b.pathKind;
  if (a.pathKind === PathKind.Prefix && a.pathLength !== b.pathLength) return b.pathLength - a.pathLength;
  if (a.id !== b.id) return a.id < b.id ? -1 : 1;
  if (a.hostSource !== b.hostSource) return a.hostSource < b.hostSource ? -1 : 1;
  return 0;
}
