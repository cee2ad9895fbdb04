// Regenerates docs/proxy/diagnostics.md from the catalog:
//   node --import tsx packages/proxy/scripts/gen-diagnostics-doc.ts
import { writeFileSync } from 'node:fs';
import { renderDiagnosticsDoc } from '../src/diagnostics/doc.js';

const target = new URL('../../../docs/proxy/diagnostics.md', import.meta.url);
writeFileSync(target, renderDiagnosticsDoc());
process.stdout.write(`wrote ${target.pathname}\n`);
