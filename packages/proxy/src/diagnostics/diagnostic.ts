// Diagnostic records as the API shows them, and the small helpers to build and group them.
import { CATALOG, type DiagnosticCode, type Severity } from './catalog.js';

export interface Diagnostic {
  code: string;
  severity: Severity;
  message: string;
  label?: string;
  value?: string;
  hint?: string;
}

/** A diagnostic plus what it concerns: an entrypoint id (candidate) or nothing (global). */
export interface ScopedDiagnostic {
  candidate_id: string | null;
  diagnostic: Diagnostic;
}

const SEVERITY: ReadonlyMap<string, Severity> = new Map(CATALOG.map((entry) => [entry.code, entry.severity]));

export function diagnostic(
  code: DiagnosticCode,
  message: string,
  extra: { label?: string; value?: string; hint?: string } = {},
): Diagnostic {
  const severity = SEVERITY.get(code) ?? 'error';
  const out: Diagnostic = { code, severity, message };
  if (extra.label !== undefined) out.label = extra.label;
  if (extra.value !== undefined) out.value = extra.value;
  if (extra.hint !== undefined) out.hint = extra.hint;
  return out;
}

export function scoped(candidateId: string | null, d: Diagnostic): ScopedDiagnostic {
  return { candidate_id: candidateId, diagnostic: d };
}

export interface DiagnosticsReport {
  total: number;
  global: Diagnostic[];
  items: { candidate_id: string; diagnostics: Diagnostic[] }[];
}

/** Groups scoped diagnostics into the `GET /diagnostics` shape; items sorted by candidate_id. */
export function groupDiagnostics(all: readonly ScopedDiagnostic[]): DiagnosticsReport {
  const global: Diagnostic[] = [];
  const byCandidate = new Map<string, Diagnostic[]>();
  for (const { candidate_id, diagnostic: d } of all) {
    if (candidate_id === null) {
      global.push(d);
      continue;
    }
    const list = byCandidate.get(candidate_id);
    if (list) list.push(d);
    else byCandidate.set(candidate_id, [d]);
  }
  const items = [...byCandidate.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([candidate_id, diagnostics]) => ({ candidate_id, diagnostics }));
  const total = global.length + items.reduce((sum, item) => sum + item.diagnostics.length, 0);
  return { total, global, items };
}

export function hasErrors(all: readonly ScopedDiagnostic[]): boolean {
  return all.some((s) => s.diagnostic.severity === 'error');
}

/** One line for logs and `validate`: `warn  W018 http_a: message (hint: ...)`. */
export function formatScoped(item: ScopedDiagnostic): string {
  const { diagnostic: d, candidate_id } = item;
  return `${d.severity.padEnd(5)} ${d.code} ${candidate_id ?? '(global)'}: ${d.message}${d.hint ? ` (hint: ${d.hint})` : ''}`;
}
