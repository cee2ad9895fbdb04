import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainText } from '../../src/cli/explain.js';
import { parseArgs, resolveConfigPath } from '../../src/cli/main.js';
import { CATALOG } from '../../src/diagnostics/catalog.js';

test('--config wins over CONFIG_PATH, which wins over ./config.yaml', () => {
  assert.equal(resolveConfigPath('/a.yaml', { CONFIG_PATH: '/b.yaml' }), '/a.yaml');
  assert.equal(resolveConfigPath(null, { CONFIG_PATH: '/b.yaml' }), '/b.yaml');
  assert.equal(resolveConfigPath(null, {}), './config.yaml');
  assert.equal(resolveConfigPath(null, { CONFIG_PATH: '' }), './config.yaml');
});

test('arguments are parsed; unknown options and a missing value are errors', () => {
  assert.deepEqual(parseArgs(['serve', '--config', 'x.yaml']), { command: 'serve', config: 'x.yaml', positional: [], help: false, version: false, error: null });
  assert.equal(parseArgs(['validate', '--config=y.yaml']).config, 'y.yaml');
  assert.deepEqual(parseArgs(['explain', 'W018']).positional, ['W018']);
  assert.equal(parseArgs(['serve', '--config']).error, '--config needs a FILE');
  assert.equal(parseArgs(['serve', '--bogus']).error, 'unknown option --bogus');
  assert.equal(parseArgs(['--version']).version, true);
});

test('explain prints title, severity, cause, effect and fix for every catalog code, case-insensitively', () => {
  for (const entry of CATALOG) {
    const text = explainText(entry.code.toLowerCase());
    assert.ok(text);
    for (const part of [entry.code, entry.severity, entry.title, entry.cause, entry.effect, entry.fix]) assert.ok(text.includes(part), `${entry.code}: ${part}`);
  }
  assert.equal(explainText('W999'), null);
});

test('catalog codes are unique and their letter matches the severity', () => {
  const codes = CATALOG.map((e) => e.code);
  assert.equal(new Set(codes).size, codes.length);
  const letter = { error: 'E', warn: 'W', info: 'I' } as const;
  for (const entry of CATALOG) assert.match(entry.code, new RegExp(`^${letter[entry.severity]}\\d{3}$`));
  for (const required of ['W001', 'W015', 'W018']) assert.ok(codes.includes(required as (typeof codes)[number]));
});
