import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { bodySignature, deliveryHeaders, deliveryId, signaturesEqual, timestampedSignature, verifyDelivery } from '../../src/webhooks/signer.js';

const body = '{"schema_version":1,"deployment_id":"d-1","namespace":"prod","name":"web","kind":"worker"}';

test('X-Svc-Signature is sha256=<hex HMAC-SHA256 of the raw body> keyed by the secret', () => {
  const expected = createHmac('sha256', 'whsec_test').update(body).digest('hex');
  assert.equal(bodySignature('whsec_test', body), `sha256=${expected}`);
  // A known vector (RFC 4231 test case 2), so the encoding cannot drift unnoticed.
  assert.equal(bodySignature('Jefe', 'what do ya want for nothing?'), 'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  assert.notEqual(bodySignature('other', body), bodySignature('whsec_test', body));
  assert.notEqual(bodySignature('whsec_test', `${body} `), bodySignature('whsec_test', body), 'any byte of the body counts');
});

test('headers of one attempt', () => {
  const headers = deliveryHeaders({ secret: 's3cret', kind: 'deployment.scaled', deliveryId: 'id-1', timestamp: 1_700_000_000, body });
  assert.equal(headers['content-type'], 'application/json');
  assert.equal(headers['x-svc-event'], 'deployment.scaled');
  assert.equal(headers['x-svc-delivery'], 'id-1');
  assert.equal(headers['x-svc-timestamp'], '1700000000');
  assert.equal(headers['x-svc-signature'], bodySignature('s3cret', body));
  const expected = createHmac('sha256', 's3cret').update(`id-1.1700000000.${body}`).digest('hex');
  assert.equal(headers['x-svc-signature-timestamped'], `sha256=${expected}`);
  assert.ok(!Object.values(headers).some((value) => value.includes('s3cret')), 'the secret itself is never sent');
});

test('the receiver check: accepts a fresh signed delivery, rejects tampering, replays and malformed headers', () => {
  const ts = 1_700_000_000;
  const good = { deliveryId: 'id-1', timestamp: String(ts), signatureTimestamped: timestampedSignature('k', 'id-1', ts, body) };
  assert.equal(verifyDelivery('k', good, body, ts + 10), 'ok');
  assert.equal(verifyDelivery('k', good, `${body}x`, ts), 'bad_signature', 'body changed');
  assert.equal(verifyDelivery('wrong', good, body, ts), 'bad_signature', 'wrong secret');
  assert.equal(verifyDelivery('k', { ...good, deliveryId: 'id-2' }, body, ts), 'bad_signature', 'id swapped');
  assert.equal(verifyDelivery('k', { ...good, timestamp: String(ts + 1) }, body, ts), 'bad_signature', 'timestamp refreshed by a replayer');
  assert.equal(verifyDelivery('k', good, body, ts + 301), 'stale', 'an old capture replayed');
  assert.equal(verifyDelivery('k', good, body, ts - 301), 'stale');
  assert.equal(verifyDelivery('k', { ...good, timestamp: undefined }, body, ts), 'malformed');
  assert.equal(verifyDelivery('k', { ...good, timestamp: '12abc' }, body, ts), 'malformed');
  assert.equal(signaturesEqual('sha256=aa', 'sha256=aa'), true);
  assert.equal(signaturesEqual('sha256=aa', 'sha256=ab'), false);
  assert.equal(signaturesEqual('sha256=aa', 'sha256=aaa'), false, 'different lengths do not throw');
});

test('delivery id: a UUIDv5, stable per (event, webhook), distinct across webhooks and events', () => {
  const event = '6f1c1b2e-8f0a-4a52-9a53-0b6f6f2a1c11';
  const webhookA = '0d7e8c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6';
  const webhookB = '1d7e8c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6';
  const id = deliveryId(event, webhookA);
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(deliveryId(event, webhookA), id);
  assert.notEqual(deliveryId(event, webhookB), id);
  assert.notEqual(deliveryId('7f1c1b2e-8f0a-4a52-9a53-0b6f6f2a1c11', webhookA), id);
  // RFC 4122 appendix-style vector: uuid5(DNS namespace, "python.org").
  assert.equal(deliveryId('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8'), '886313e1-3b8a-5372-9b90-0c9aee199e5d');
  assert.match(deliveryId(event, 'not-a-uuid'), /^[0-9a-f-]{36}$/, 'total over any text');
});
