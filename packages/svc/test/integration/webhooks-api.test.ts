import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startTestServer, type TestServer } from '../support/server.js';
import type { Problem } from './resources-support.js';
import { openDatabase } from '../../src/store/db.js';
import { createSecretBox, parseSecretKey } from '../../src/crypto/secret-box.js';
import { webhookSigningSecret } from '../../src/store/webhooks.js';

let server: TestServer;
before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server?.close();
});

interface Webhook {
  id: string;
  url: string;
  events: string[];
  secret?: string;
  created_at: string;
  revoked_at?: string | null;
}

test('create returns the secret once (generated when omitted); list never shows it; delete revokes', async () => {
  const generated = await server.request<Webhook>('POST', '/webhooks', { body: { url: 'http://10.0.0.5:9000/hook' } });
  assert.equal(generated.status, 201);
  assert.deepEqual(Object.keys(generated.body).sort(), ['created_at', 'events', 'id', 'secret', 'url']);
  assert.deepEqual(generated.body.events, []);
  assert.match(generated.body.secret ?? '', /^whsec_[A-Za-z0-9_-]{43}$/);

  const given = await server.request<Webhook>('POST', '/webhooks', {
    body: { url: 'https://hooks.example.com/x', events: ['deployment.status_changed', 'deployment.*', '*', 'deployment.status_changed'], secret: 'weak' },
  });
  assert.equal(given.status, 201);
  assert.equal(given.body.secret, 'weak', 'no minimum strength on a supplied secret');
  assert.deepEqual(given.body.events, ['deployment.status_changed', 'deployment.*', '*']);
  const emptyList = await server.request<Webhook>('POST', '/webhooks', { body: { url: 'http://192.168.1.2/', events: [] } });
  assert.equal(emptyList.status, 201);

  const list = await server.request<Webhook[]>('GET', '/webhooks');
  assert.equal(list.status, 200);
  assert.equal(list.body.length, 3);
  for (const webhook of list.body) {
    assert.deepEqual(Object.keys(webhook).sort(), ['created_at', 'events', 'id', 'revoked_at', 'url']);
    assert.equal(webhook.revoked_at, null);
  }
  assert.ok(!list.text.includes(generated.body.secret ?? 'unreachable'));

  assert.equal((await server.request('DELETE', `/webhooks/${generated.body.id}`)).status, 204);
  const afterDelete = await server.request<Webhook[]>('GET', '/webhooks');
  const revoked = afterDelete.body.find((w) => w.id === generated.body.id);
  assert.ok(revoked?.revoked_at, 'soft delete keeps the row with revoked_at');
  assert.equal((await server.request('DELETE', `/webhooks/${generated.body.id}`)).status, 204, 'revoking twice is harmless');
  const again = await server.request<Webhook[]>('GET', '/webhooks');
  assert.equal(again.body.find((w) => w.id === generated.body.id)?.revoked_at, revoked.revoked_at, 'first revocation time kept');
  assert.equal((await server.request('DELETE', `/webhooks/${randomUUID()}`)).status, 404);

  const db = openDatabase(server.dbPath);
  try {
    const box = createSecretBox(parseSecretKey(server.env.SVC_SECRET_KEY));
    assert.equal(webhookSigningSecret(db, box, generated.body.id), generated.body.secret);
  } finally {
    db.close();
  }
});

test('webhook.url.format and webhook.events.unknown', async () => {
  const refusedUrls = [
    'ftp://example.com/',
    'not a url',
    'http://localhost:8080/',
    'http://sub.localhost/',
    'http://127.0.0.1/',
    'http://127.9.9.9/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://169.254.169.254/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    `https://example.com/${'p'.repeat(2100)}`,
  ];
  for (const url of refusedUrls) {
    const response = await server.request<Problem>('POST', '/webhooks', { body: { url } });
    assert.equal(response.status, 422, url);
    assert.deepEqual(response.body.violations.map((v) => v.code), ['webhook.url.format'], url);
  }
  for (const filter of ['deployment', 'node.*', 'deployment.created', '', 'DEPLOYMENT.*']) {
    const response = await server.request<Problem>('POST', '/webhooks', { body: { url: 'http://10.1.1.1/', events: ['deployment.scaled', filter] } });
    assert.equal(response.status, 422, filter);
    assert.deepEqual(response.body.violations.map((v) => [v.property_path, v.code]), [['events[1]', 'webhook.events.unknown']], filter);
  }
  const both = await server.request<Problem>('POST', '/webhooks', { body: { url: 'http://localhost/', events: ['x'] } });
  assert.deepEqual(both.body.violations.map((v) => v.code), ['webhook.url.format', 'webhook.events.unknown']);
});

test('bad webhook bodies are 4xx and create nothing', async () => {
  const before = (await server.request<unknown[]>('GET', '/webhooks')).body.length;
  const bodies: unknown[] = [
    {},
    { url: 5 },
    { url: 'http://10.0.0.1/', events: 'deployment.*' },
    { url: 'http://10.0.0.1/', events: [1] },
    { url: 'http://10.0.0.1/', events: Array.from({ length: 33 }, () => '*') },
    { url: 'http://10.0.0.1/', secret: '' },
    { url: 'http://10.0.0.1/', secret: 's'.repeat(1025) },
    { url: 'http://10.0.0.1/', secret: null },
    { url: 'http://10.0.0.1/', active: true },
    { url: 'u'.repeat(60_000) },
  ];
  for (const body of bodies) {
    const response = await server.request('POST', '/webhooks', { body });
    assert.ok(response.status >= 400 && response.status < 500, `${JSON.stringify(body).slice(0, 80)} -> ${response.status}`);
  }
  assert.equal((await server.request('POST', '/webhooks', { body: { url: 'u'.repeat(100_000) } })).status, 413);
  assert.equal((await server.request<unknown[]>('GET', '/webhooks')).body.length, before);
});
