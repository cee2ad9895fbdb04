// Which daemons take an exec's terminal size at create (ConsoleSize, Docker API 1.42+) and which need the
// resize-after-start fallback (the shared test host runs dockerd 20.10 = API 1.41, so only the fallback runs there).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { supportsExecConsoleSize } from '../../src/runtime/docker/index.js';

test('ConsoleSize at exec create from API 1.42 on; older, unknown or unparsable versions fall back', () => {
  for (const version of ['1.42', '1.43', '1.45', '1.100', '2.0']) assert.equal(supportsExecConsoleSize(version), true, version);
  for (const version of ['1.41', '1.24', '1.4', '0.99', null, '', '1.42-beta', 'v1.43', '1']) {
    assert.equal(supportsExecConsoleSize(version), false, String(version));
  }
});
