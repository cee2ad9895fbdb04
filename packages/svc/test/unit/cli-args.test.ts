import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgv, UsageError } from '../../src/cli/args.js';
import { helpText } from '../../src/cli/help.js';
import { COMMANDS } from '../../src/cli/command-table.js';

function command(argv: string[]) {
  const result = parseArgv(argv);
  assert.equal(result.kind, 'command');
  if (result.kind !== 'command') throw new Error('unreachable');
  return result;
}

test('global options before the command, command flags after it', () => {
  const r = command(['-c', 'prod', '--config', '/tmp/c.toml', 'deployment', 'list', '-n', 'web', '-s', 'running', '--status=failed', '-l', 'a=b', '-o', 'json']);
  assert.deepEqual(r.command.path, ['deployment', 'list']);
  assert.deepEqual(r.global, { context: 'prod', config: '/tmp/c.toml' });
  assert.deepEqual(r.flags, { namespace: 'web', status: ['running', 'failed'], label: ['a=b'], output: 'json' });
});

test('-c after a command that defines -c is that command\'s flag; --context still selects the context', () => {
  const logs = command(['deployment', 'logs', 'ID', '-c', 'web_1', '--context', 'prod', '--tail', '5']);
  assert.equal(logs.flags.container, 'web_1');
  assert.equal(logs.global.context, 'prod');
  assert.equal(logs.args.ID, 'ID');
  const list = command(['namespace', 'list', '-c', 'prod']);
  assert.equal(list.global.context, 'prod');
});

test('exec keeps everything after -- untouched', () => {
  const r = command(['deployment', 'exec', 'ID', '-T', '--', 'ls', '-la', '--color']);
  assert.deepEqual(r.rest, ['ls', '-la', '--color']);
  assert.equal(r.flags['no-tty'], true);
});

test('context alone, and its sub-modes', () => {
  assert.deepEqual(command(['context']).command.path, ['context']);
  assert.deepEqual(command(['context', 'user-token']).command.path, ['context', 'user-token']);
});

test('version and help', () => {
  assert.deepEqual(parseArgv(['--version']), { kind: 'version' });
  assert.deepEqual(parseArgv([]), { kind: 'help', topic: [] });
  assert.deepEqual(parseArgv(['token', '--help']), { kind: 'help', topic: ['token'] });
  assert.deepEqual(parseArgv(['token', 'create', '-h']), { kind: 'help', topic: ['token', 'create'] });
  assert.throws(() => parseArgv(['deployment']), /needs a subcommand/);
});

test('usage errors', () => {
  const cases: [string[], RegExp][] = [
    [['frobnicate'], /unknown command 'frobnicate'/],
    [['deployment', 'frob'], /unknown command 'deployment frob'/],
    [['deployment', 'inspect'], /needs ID/],
    [['deployment', 'list', '--nope'], /unknown option '--nope'/],
    [['deployment', 'list', '-o', 'yaml'], /must be one of table, json/],
    [['deployment', 'list', '-n'], /needs a value/],
    [['deployment', 'list', '-n', 'a', '-n', 'b'], /more than once/],
    [['deployment', 'inspect', 'a', 'b'], /unexpected argument 'b'/],
    [['apply', '--dry-run=yes'], /takes no value/],
    [['init', '--runtime', 'kvm'], /must be one of/],
  ];
  for (const [argv, message] of cases) assert.throws(() => parseArgv(argv), (e: unknown) => e instanceof UsageError && message.test(e.message), argv.join(' '));
});

test('secret values may start with a dash', () => {
  assert.equal(command(['secret', 'create', 's1', '-n', 'prod', '-v', '-dashed-']).flags.value, '-dashed-');
});

test('help text lists every command and every flag of a command', () => {
  const top = helpText([]);
  for (const c of COMMANDS) assert.ok(top.includes(c.path[0]!), c.path[0]);
  const list = helpText(['deployment', 'list']);
  for (const flag of ['--namespace', '--status', '--type', '--label', '--output', '--context']) assert.ok(list.includes(flag), flag);
  assert.match(helpText(['deployment']), /health-checks/);
  // Where -c is the command's own flag, help does not also advertise it as --context.
  const logs = helpText(['deployment', 'logs']);
  assert.match(logs, /-c, --container/);
  assert.doesNotMatch(logs, /-c, --context/);
  assert.match(helpText(['namespace', 'list']), /-c, --context/);
});
