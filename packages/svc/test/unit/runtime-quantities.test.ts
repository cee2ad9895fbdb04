import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCpuQuantity, parseMemoryQuantity } from '../../src/runtime/quantities.js';

test('CPU millicores and cores become exact nano-CPUs', () => {
  assert.equal(parseCpuQuantity('500m'), 500_000_000);
  assert.equal(parseCpuQuantity('1m'), 1_000_000);
  assert.equal(parseCpuQuantity('1'), 1_000_000_000);
  assert.equal(parseCpuQuantity('0.5'), 500_000_000);
  assert.equal(parseCpuQuantity('0.1'), 100_000_000);
  assert.equal(parseCpuQuantity('2.25'), 2_250_000_000);
  assert.equal(parseCpuQuantity(1), 1_000_000_000);
  assert.equal(parseCpuQuantity(0.5), 500_000_000);
  assert.equal(parseCpuQuantity('0.000000001'), 1);
});

test('CPU quantities that are empty, zero, negative, malformed or too fine are refused', () => {
  for (const bad of ['', '0', '0m', '0.0', '-1', '1.5m', 'm', '1 ', ' 1', '1c', 'abc', '1e3', '.5', '5.', '0.0000000001', 'NaN', '1'.repeat(40)]) {
    assert.equal(parseCpuQuantity(bad), null, `expected ${JSON.stringify(bad)} to be refused`);
  }
  for (const bad of [null, undefined, true, {}, [], Number.NaN, Number.POSITIVE_INFINITY, -0.5, 0]) {
    assert.equal(parseCpuQuantity(bad), null, `expected ${String(bad)} to be refused`);
  }
});

test('memory bytes and binary suffixes become bytes', () => {
  assert.equal(parseMemoryQuantity('1048576'), 1_048_576);
  assert.equal(parseMemoryQuantity('1Ki'), 1024);
  assert.equal(parseMemoryQuantity('256Mi'), 268_435_456);
  assert.equal(parseMemoryQuantity('2Gi'), 2_147_483_648);
  assert.equal(parseMemoryQuantity('1.5Gi'), 1_610_612_736);
  assert.equal(parseMemoryQuantity('0.5Ki'), 512);
  assert.equal(parseMemoryQuantity(4096), 4096);
});

test('memory quantities with decimal suffixes, fractions of a byte or junk are refused', () => {
  for (const bad of ['', '0', '0Mi', '-1Mi', '1K', '1M', '1G', '1Ti', '1mi', '1 Mi', 'Mi', '1.5', '0.1Ki', '1e6', '12abc', '9'.repeat(40)]) {
    assert.equal(parseMemoryQuantity(bad), null, `expected ${JSON.stringify(bad)} to be refused`);
  }
  assert.equal(parseMemoryQuantity(1.5), null);
  assert.equal(parseMemoryQuantity(null), null);
  assert.equal(parseMemoryQuantity(`${Number.MAX_SAFE_INTEGER}Gi`), null);
});
