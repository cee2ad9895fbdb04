import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildLookup, interpolate, parseEnvFile } from '../../src/cli/interpolate.js';

const vars = (values: Record<string, string>) => (name: string) => values[name];

test('$A never corrupts $AB: the longest name wins', () => {
  const lookup = vars({ A: 'x', AB: 'y' });
  assert.equal(interpolate('$AB', lookup).value, 'y');
  assert.equal(interpolate('$A$AB', lookup).value, 'xy');
  assert.equal(interpolate('${A}B', lookup).value, 'xB');
  assert.equal(interpolate('$A-$AB', lookup).value, 'x-y');
});

test('a name shorter than the text after it is not replaced by a prefix match', () => {
  // $AB is undefined even though $A is: it must be reported, not turned into "xB".
  const result = interpolate('$AB', vars({ A: 'x' }));
  assert.deepEqual(result.missing, ['AB']);
  assert.equal(result.value, '');
});

test('braced, default and escape forms', () => {
  const lookup = vars({ TAG: '1.2', EMPTY: '' });
  assert.equal(interpolate('nginx:${TAG}', lookup).value, 'nginx:1.2');
  assert.equal(interpolate('${NOPE:-latest}', lookup).value, 'latest');
  assert.equal(interpolate('${EMPTY:-fallback}', lookup).value, 'fallback');
  assert.equal(interpolate('${EMPTY-fallback}', lookup).value, '');
  assert.equal(interpolate('${NOPE-fallback}', lookup).value, 'fallback');
  assert.equal(interpolate('${TAG:-x}', lookup).value, '1.2');
  assert.equal(interpolate('cost $$5 and $$TAG', lookup).value, 'cost $5 and $TAG');
  assert.deepEqual(interpolate('cost $$5 and $$TAG', lookup).missing, []);
});

test('a lone $ or $ before a non-name character stays literal', () => {
  const lookup = vars({});
  for (const text of ['a$', '$5', 'x $ y', '$-', '$.']) {
    const result = interpolate(text, lookup);
    assert.equal(result.value, text);
    assert.deepEqual(result.missing, []);
    assert.deepEqual(result.errors, []);
  }
});

test('substituted values are not scanned again', () => {
  assert.equal(interpolate('$A', vars({ A: '$B', B: 'no' })).value, '$B');
});

test('undefined variables are all reported; syntax errors are errors', () => {
  const result = interpolate('$X-${Y}-$X', vars({}));
  assert.deepEqual(result.missing, ['X', 'Y', 'X']);
  assert.equal(interpolate('${UNCLOSED', vars({})).errors.length, 1);
  assert.equal(interpolate('${1BAD}', vars({})).errors.length, 1);
  assert.equal(interpolate('${}', vars({})).errors.length, 1);
});

test('env file: comments, export, quotes, inline comments, bad lines', () => {
  const text = [
    '# comment',
    '',
    'export TAG=1.2',
    'NAME = web ',
    'QUOTED="a \\"b\\" c\\n"',
    "SINGLE='$NOT_EXPANDED'",
    'INLINE=value # comment',
    'HASH=a#b',
    'broken line',
    '9BAD=x',
  ].join('\n');
  const { values, errors } = parseEnvFile(text, 'prod.env');
  assert.equal(values.get('TAG'), '1.2');
  assert.equal(values.get('NAME'), 'web');
  assert.equal(values.get('QUOTED'), 'a "b" c\n');
  assert.equal(values.get('SINGLE'), '$NOT_EXPANDED');
  assert.equal(values.get('INLINE'), 'value');
  assert.equal(values.get('HASH'), 'a#b');
  assert.deepEqual(errors, ['prod.env:9: expected KEY=VALUE', "prod.env:10: invalid variable name '9BAD'"]);
});

test('env files win over the environment; later files win', () => {
  const lookup = buildLookup({ A: 'env', B: 'env', C: 'env' }, [new Map([['A', 'file1'], ['B', 'file1']]), new Map([['B', 'file2']])]);
  assert.equal(lookup('A'), 'file1');
  assert.equal(lookup('B'), 'file2');
  assert.equal(lookup('C'), 'env');
  assert.equal(lookup('D'), undefined);
});
