// Merges the entrypoint sets of every source into one set keyed by id. Pure.
// Precedence on an id conflict: the API first (an operator's explicit action), then the file and poll
// providers, then the container platforms. The loser is not dropped silently: a W002 names both sources.
import { diagnostic, scoped, type ScopedDiagnostic } from '../diagnostics/diagnostic.js';
import type { Entrypoint, Source } from '../model/entrypoint.js';

export const SOURCE_PRECEDENCE: readonly Source[] = ['api', 'config', 'http', 'docker', 'podman', 'swarm', 'kubernetes', 'nomad'];

export interface MergeResult {
  /** One entrypoint per id, sorted by id. */
  entrypoints: Entrypoint[];
  diagnostics: ScopedDiagnostic[];
}

export function mergeSources(sets: ReadonlyMap<Source, readonly Entrypoint[]>): MergeResult {
  const winners = new Map<string, Entrypoint>();
  const diagnostics: ScopedDiagnostic[] = [];
  for (const source of SOURCE_PRECEDENCE) {
    const seenInSource = new Set<string>();
    for (const entrypoint of sets.get(source) ?? []) {
      if (seenInSource.has(entrypoint.id)) {
        diagnostics.push(
          scoped(entrypoint.id, diagnostic('W003', `source "${source}" defines ${entrypoint.id} more than once; the first definition is used`, { value: entrypoint.id })),
        );
        continue;
      }
      seenInSource.add(entrypoint.id);
      const existing = winners.get(entrypoint.id);
      if (existing) {
        diagnostics.push(
          scoped(
            entrypoint.id,
            diagnostic('W002', `${entrypoint.id} is defined by sources "${existing.source}" and "${source}"; the definition from "${existing.source}" is used`, {
              value: `${existing.source},${source}`,
              hint: `rename the entrypoint in one source, or remove it from "${source}"`,
            }),
          ),
        );
        continue;
      }
      winners.set(entrypoint.id, entrypoint);
    }
  }
  const entrypoints = [...winners.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { entrypoints, diagnostics };
}
