import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CATALOG } from '../../src/diagnostics/catalog.js';
import { renderDiagnosticsDoc } from '../../src/diagnostics/doc.js';

test('docs/proxy/diagnostics.md is generated from the current catalog', () => {
  const committed = readFileSync(new URL('../../../../docs/proxy/diagnostics.md', import.meta.url), 'utf8');
  assert.equal(committed, renderDiagnosticsDoc(), 'run: node --import tsx packages/proxy/scripts/gen-diagnostics-doc.ts');
  for (const entry of CATALOG) assert.ok(committed.includes(`## ${entry.code}`));
});
