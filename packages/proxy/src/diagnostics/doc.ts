// Renders docs/proxy/diagnostics.md from the catalog (scripts/gen-diagnostics-doc.ts writes it; a test checks it).
import { CATALOG } from './catalog.js';

export function renderDiagnosticsDoc(): string {
  const lines = [
    '# svc-proxy diagnostics',
    '',
    '<!-- Generated from packages/proxy/src/diagnostics/catalog.ts by packages/proxy/scripts/gen-diagnostics-doc.ts. Do not edit by hand. -->',
    '',
    'Diagnostics are shown by `GET /diagnostics`, in the `diagnostics` field of each entrypoint, and by `svc-proxy validate`.',
    '`svc-proxy explain CODE` prints the same text as below. Codes `E###` are errors, `W###` warnings, `I###` information.',
    'Every diagnostic is attached to the entrypoint id it concerns (`candidate_id`), or is global when it concerns no single',
    'entrypoint. Diagnostics are recomputed on every change, so one disappears as soon as its cause does.',
    '`svc-proxy validate` exits 1 when at least one diagnostic has severity `error`.',
    '',
    '| Code | Severity | Title |',
    '|---|---|---|',
    ...CATALOG.map((entry) => `| [${entry.code}](#${entry.code.toLowerCase()}) | ${entry.severity} | ${entry.title} |`),
    '',
  ];
  for (const entry of CATALOG) {
    lines.push(`## ${entry.code}`, '', `**${entry.title}** (severity: \`${entry.severity}\`)`, '', `- Cause: ${entry.cause}`, `- Effect: ${entry.effect}`, `- Fix: ${entry.fix}`, '');
  }
  return lines.join('\n');
}
