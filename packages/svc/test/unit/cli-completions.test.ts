import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { completionScript } from '../../src/cli/completions.js';
import { COMMANDS } from '../../src/cli/command-table.js';

test('every command name and flag of the table is in every script', () => {
  for (const shell of ['bash', 'zsh', 'fish'] as const) {
    const script = completionScript(shell);
    for (const c of COMMANDS) {
      for (const word of c.path) assert.ok(script.includes(word), `${shell}: ${word}`);
      for (const f of c.flags) assert.ok(script.includes(shell === 'fish' ? `-l ${f.long}` : `--${f.long}`), `${shell}: --${f.long} of ${c.path.join(' ')}`);
    }
  }
});

function bashComplete(line: string): string[] {
  const script = `${completionScript('bash')}
COMP_WORDS=(${line}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _svc; printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['-c', script], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

test('bash: the generated function completes nouns, verbs and flags', () => {
  assert.deepEqual(bashComplete('svc dep').sort(), ['deployment']);
  assert.ok(bashComplete("svc deployment ''").includes('health-checks'));
  assert.deepEqual(bashComplete('svc deployment list --na'), ['--namespace']);
  assert.ok(bashComplete("svc -c prod token create x ''").includes('--scope'));
});
