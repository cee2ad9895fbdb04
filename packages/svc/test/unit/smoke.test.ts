import { test } from 'node:test';
import assert from 'node:assert/strict';
test('placeholder removed by issue 2', () => { assert.equal(1 + 1, 2); });
