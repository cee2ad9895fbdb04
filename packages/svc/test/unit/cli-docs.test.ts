// The CLI reference (docs/svc/cli.md) must mention every command and every flag of the command table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMMANDS, GLOBAL_FLAGS } from '../../src/cli/command-table.js';

const doc = readFileSync(fileURLToPath(new URL('../../../../docs/svc/cli.md', import.meta.url)), 'utf8');

test('docs/svc/cli.md covers every command and flag', () => {
  for (const c of COMMANDS) {
    const words = c.path.length > 1 ? c.path[1]! : c.path[0]!;
    assert.ok(doc.includes(words), `command ${c.path.join(' ')}`);
    for (const f of c.flags) {
      assert.ok(doc.includes(`--${f.long}`) || (f.short !== undefined && doc.includes(`-${f.short} `)) || (f.short !== undefined && doc.includes(`-${f.short}`)), `${c.path.join(' ')} --${f.long}`);
    }
  }
  for (const f of GLOBAL_FLAGS) assert.ok(doc.includes(`--${f.long}`), f.long);
});
