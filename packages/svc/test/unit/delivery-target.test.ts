// The send-time URL rule with an injected resolver standing in for /etc/hosts entries: names that resolve to
// loopback or link-local are refused, and the refusal happens before any connection is made.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { guardedLookup, refusedResolutionReason, refusedUrlReason, type Resolver } from '../../src/webhooks/target.js';
import { createSender } from '../../src/webhooks/sender.js';

/** An /etc/hosts-like table. */
function hostsResolver(table: Record<string, LookupAddress[]>): Resolver {
  return (hostname, _family, callback) => {
    const entry = table[hostname];
    if (!entry) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    return callback(null, entry);
  };
}

const hosts = hostsResolver({
  'sneaky.example': [{ address: '127.0.0.1', family: 4 }],
  'meta.example': [{ address: '169.254.169.254', family: 4 }],
  'v6loop.example': [{ address: '::1', family: 6 }],
  'mapped.example': [{ address: '::ffff:127.0.0.1', family: 6 }],
  'mixed.example': [
    { address: '10.1.2.3', family: 4 },
    { address: '127.0.0.1', family: 4 },
  ],
  'fine.example': [
    { address: '10.1.2.3', family: 4 },
    { address: 'fd00::1', family: 6 },
  ],
});

function lookupVia(hostname: string, options: { all?: boolean; family?: number }): Promise<{ error: Error | null; result: unknown }> {
  return new Promise((resolve) => {
    const lookup = guardedLookup(hosts) as unknown as (h: string, o: object, cb: (error: Error | null, ...rest: unknown[]) => void) => void;
    lookup(hostname, options, (error, ...rest) => resolve({ error, result: rest }));
  });
}

test('refusedResolutionReason: every resolved address must pass the creation rule', () => {
  assert.match(refusedResolutionReason('a', ['127.0.0.1']) ?? '', /loopback/);
  assert.match(refusedResolutionReason('a', ['127.8.0.1']) ?? '', /loopback/);
  assert.match(refusedResolutionReason('a', ['::1']) ?? '', /loopback/);
  assert.match(refusedResolutionReason('a', ['169.254.1.1']) ?? '', /link-local/);
  assert.match(refusedResolutionReason('a', ['fe80::1']) ?? '', /link-local/);
  assert.match(refusedResolutionReason('a', ['0.0.0.0']) ?? '', /unspecified/);
  assert.match(refusedResolutionReason('a', ['10.0.0.1', '127.0.0.1']) ?? '', /127\.0\.0\.1/);
  assert.match(refusedResolutionReason('a', []) ?? '', /no address/);
  assert.equal(refusedResolutionReason('a', ['10.0.0.1', '192.168.1.1', '8.8.8.8', 'fd00::1']), null, 'private and public ranges are allowed');
});

test('refusedUrlReason: the stored URL is re-checked with the creation rule', () => {
  assert.match(refusedUrlReason('http://localhost./x') ?? '', /loopback/);
  assert.match(refusedUrlReason('http://127.0.0.1:9/') ?? '', /loopback/);
  assert.match(refusedUrlReason('ftp://10.0.0.1/') ?? '', /scheme/);
  assert.equal(refusedUrlReason('http://10.0.0.1:8080/hook'), null);
});

test('guardedLookup: refuses names resolving to loopback or link-local, in both callback forms', async () => {
  for (const name of ['sneaky.example', 'meta.example', 'v6loop.example', 'mapped.example', 'mixed.example']) {
    for (const all of [false, true]) {
      const { error } = await lookupVia(name, { all });
      assert.ok(error, `${name} (all=${all}) is refused`);
      assert.equal((error as { code?: string }).code, 'ERR_SVC_WEBHOOK_TARGET_REFUSED');
    }
  }
  const single = await lookupVia('fine.example', {});
  assert.equal(single.error, null);
  assert.deepEqual(single.result, ['10.1.2.3', 4], 'the checked address is the one connected to');
  const all = await lookupVia('fine.example', { all: true });
  assert.deepEqual(all.result, [[{ address: '10.1.2.3', family: 4 }, { address: 'fd00::1', family: 6 }]]);
  const missing = await lookupVia('nowhere.example', {});
  assert.match(missing.error?.message ?? '', /ENOTFOUND/);
});

test('a socket using guardedLookup never reaches a loopback listener behind a name', async () => {
  let connections = 0;
  const listener = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  try {
    const error = await new Promise<Error>((resolve) => {
      const socket = connect({ host: 'sneaky.example', port, lookup: guardedLookup(hosts) });
      socket.once('connect', () => resolve(new Error('connected')));
      socket.once('error', resolve);
    });
    assert.match(error.message, /loopback/);

    // The delivery sender: the attempt fails with the reason, the listener sees nothing.
    const sender = createSender({ attemptTimeoutMs: 2000, resolver: hosts });
    try {
      const outcome = await sender.send({ url: `http://sneaky.example:${port}/hook`, headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(outcome.kind, 'failed');
      assert.match(outcome.kind === 'failed' ? outcome.error : '', /sneaky\.example.*127\.0\.0\.1.*loopback/);
      const literal = await sender.send({ url: `http://127.0.0.1:${port}/hook`, headers: {}, body: '{}' });
      assert.match(literal.kind === 'failed' ? literal.error : '', /refused at send time.*loopback/);
    } finally {
      await sender.close();
    }
    assert.equal(connections, 0);
  } finally {
    listener.close();
  }
});
