// `svc-proxy explain CODE`: the catalog entry of one diagnostic code.
import { catalogEntry, CATALOG } from '../diagnostics/catalog.js';

export function explainText(code: string): string | null {
  const entry = catalogEntry(code);
  if (!entry) return null;
  return [`${entry.code} (${entry.severity}): ${entry.title}`, '', `Cause:  ${entry.cause}`, `Effect: ${entry.effect}`, `Fix:    ${entry.fix}`, ''].join('\n');
}

export function explain(code: string | undefined): number {
  const text = code === undefined ? null : explainText(code);
  if (text === null) {
    process.stderr.write(`${code === undefined ? 'missing CODE' : `unknown diagnostic code "${code}"`}. Known codes:\n`);
    for (const entry of CATALOG) process.stderr.write(`  ${entry.code}  ${entry.severity.padEnd(5)} ${entry.title}\n`);
    return 2;
  }
  process.stdout.write(text);
  return 0;
}
