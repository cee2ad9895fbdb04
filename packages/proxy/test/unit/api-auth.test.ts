import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { authenticate } from '../../src/api/auth.js';
import { corsHeaders } from '../../src/api/cors.js';

const hash = (text: string) => createHash('sha256').update(text).digest('hex');
const users = [
  { name: 'admin', hash: hash('pw'), role: 'admin' as const },
  { name: 'viewer', hash: hash('v:w'), role: 'read-only' as const },
];
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

test('Basic credentials are checked against the SHA-256 hash', () => {
  assert.equal(authenticate(users, basic('admin', 'pw'))?.name, 'admin');
  assert.equal(authenticate(users, basic('viewer', 'v:w'))?.role, 'read-only', 'a colon inside the password is kept');
  assert.equal(authenticate(users, basic('admin', 'PW')), null);
  assert.equal(authenticate(users, basic('nobody', 'pw')), null);
  assert.equal(authenticate(users, undefined), null);
  assert.equal(authenticate(users, 'Bearer x'), null);
  assert.equal(authenticate(users, 'Basic !!!'), null);
  assert.equal(authenticate(users, `Basic ${'A'.repeat(10_000)}`), null);
});

test('CORS: * without configured origins; only listed origins otherwise; preflight adds methods and headers', () => {
  assert.deepEqual(corsHeaders('https://a.example', [], false), { 'access-control-allow-origin': '*' });
  assert.deepEqual(corsHeaders('https://a.example', ['https://a.example'], false), { 'access-control-allow-origin': 'https://a.example', vary: 'Origin' });
  assert.deepEqual(corsHeaders('https://b.example', ['https://a.example'], true), { vary: 'Origin' });
  const preflight = corsHeaders(undefined, [], true);
  assert.equal(preflight['access-control-allow-methods'], 'GET, POST, PUT, DELETE, OPTIONS');
  assert.equal(preflight['access-control-allow-headers'], 'Authorization, Content-Type, Accept');
});
