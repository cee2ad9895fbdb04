import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asFromWorker } from '../../src/dataplane/cluster-protocol.js';

test('worker verdict messages are accepted only with well-formed [id, key, healthy] entries', () => {
  const health = [['http_a', '127.0.0.1:80', false]];
  assert.deepEqual(asFromWorker({ t: 'svc-proxy:verdicts', health }), { t: 'svc-proxy:verdicts', health });
  assert.deepEqual(asFromWorker({ t: 'svc-proxy:verdicts', health: [] }), { t: 'svc-proxy:verdicts', health: [] });
  for (const bad of [
    { t: 'svc-proxy:verdicts' },
    { t: 'svc-proxy:verdicts', health: 'x' },
    { t: 'svc-proxy:verdicts', health: [['http_a', '127.0.0.1:80']] },
    { t: 'svc-proxy:verdicts', health: [['http_a', 80, false]] },
    { t: 'svc-proxy:verdicts', health: [['http_a', '127.0.0.1:80', 'false']] },
    { t: 'svc-proxy:verdicts', health: [...health, null] },
  ]) {
    assert.equal(asFromWorker(bad), null, JSON.stringify(bad));
  }
});
