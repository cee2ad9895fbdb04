// The provider framework: every source of entrypoints (routes file, http poll, and later Docker, Podman,
// Swarm, Kubernetes, Nomad) implements Provider and emits its COMPLETE current set each time it changes.
// Definitions are validated by the one shared parseEntrypoint(); a provider never drops its last good set on
// a transient failure, it re-emits it together with a diagnostic.
import { formatIssue, isRecord, type Path } from '../config/checks.js';
import { parseEntrypoint } from '../config/entrypoint-schema.js';
import { diagnostic, scoped, type ScopedDiagnostic } from '../diagnostics/diagnostic.js';
import type { Entrypoint, ProviderName } from '../model/entrypoint.js';

export interface ProviderState {
  /** Every valid entrypoint of this source, `source` set to the provider name. */
  entrypoints: Entrypoint[];
  /** Problems of this source: rejected definitions, unreadable file, failing endpoint. */
  diagnostics: ScopedDiagnostic[];
}

export interface Provider {
  readonly name: ProviderName;
  /**
   * Starts watching. Calls `emit` with the full state after the initial load (before the returned promise
   * resolves) and on every change afterwards. Must not throw for a broken source: report it via diagnostics.
   */
  start(emit: (state: ProviderState) => void): Promise<void>;
  /** Stops watchers and timers; no emit after it resolves. */
  stop(): Promise<void>;
}

export interface NormalizeOptions {
  source: ProviderName;
  /** Where the definitions come from, for messages (file name or URL). */
  origin: string;
  /** Path of the list inside the document, e.g. ['entrypoints'] for the routes file. */
  listPath: Path;
  /** Maps a path inside the document to `file:line:column`, when the source is a text file. */
  locate?: (path: Path) => string;
}

/** Validates a list of raw definitions; invalid ones become diagnostics attached to their id when it is known. */
export function normalizeDefinitions(definitions: readonly unknown[], options: NormalizeOptions): ProviderState {
  const entrypoints: Entrypoint[] = [];
  const diagnostics: ScopedDiagnostic[] = [];
  definitions.forEach((definition, index) => {
    const result = parseEntrypoint(definition, { source: options.source, requireCoreConfigFields: false });
    if (result.entrypoint) {
      entrypoints.push(result.entrypoint);
      return;
    }
    for (const issue of result.issues) {
      const fullPath = [...options.listPath, index, ...issue.path];
      const where = options.locate ? options.locate(fullPath) : options.origin;
      const shown = { ...issue, path: fullPath };
      const name = isRecord(definition) && typeof definition.name === 'string' ? definition.name : undefined;
      diagnostics.push(
        scoped(
          result.candidateId,
          diagnostic(issue.code, `${where}: ${formatIssue(shown)}; entrypoint skipped`, {
            label: issue.path.map(String).join('.'),
            ...(name !== undefined && result.candidateId === null ? { value: name } : {}),
          }),
        ),
      );
    }
  });
  return { entrypoints, diagnostics };
}

/** A URL safe to show: userinfo and query string (where tokens hide) removed. */
export function redactUrl(text: string): string {
  try {
    const url = new URL(text);
    url.username = '';
    url.password = '';
    url.search = url.search ? '?…' : '';
    return url.toString();
  } catch {
    return '(invalid URL)';
  }
}
