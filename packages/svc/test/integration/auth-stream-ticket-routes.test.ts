// Routes that declare `streamTicket` accept a single-use `?ticket=` instead of a bearer token (browser streams),
// bound to the route's `:id` and stream kind. In-process app on a real SQLite file, with probe routes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestApp, type TestApp } from '../support/app.js';
import type { Principal } from '../../src/api/context.js';

let testApp: TestApp;
const issuer: Principal = { tokenId: 't1', userId: 'u1', username: 'admin', kind: 'session', scopes: ['admin'], namespaces: ['prod'] };
const reader: Principal = { ...issuer, scopes: ['secrets:read'] };

before(async () => {
  testApp = createTestApp();
  testApp.app.get<{ Params: { id: string } }>(
    '/probe/:id/logs',
    { config: { auth: { scope: 'deployments:read', streamTicket: 'logs' }, timeout: false } },
    async (request) => ({ id: request.params.id, user: request.principal?.username, namespaces: request.principal?.namespaces }),
  );
  testApp.app.get('/probe/:id/plain', { config: { auth: { scope: 'deployments:read' } } }, async () => ({ ok: true }));
  await testApp.app.ready();
});
after(async () => {
  await testApp.close();
});

test('a ticket authenticates once, for its deployment and stream, with the issuer\'s rights', async () => {
  const { ticket } = testApp.deps.streamTickets.issue(issuer, 'dep-1', 'logs');
  const first = await testApp.app.inject({ method: 'GET', url: `/probe/dep-1/logs?follow=true&ticket=${ticket}` });
  assert.equal(first.statusCode, 200);
  assert.deepEqual(first.json(), { id: 'dep-1', user: 'admin', namespaces: ['prod'] });
  const again = await testApp.app.inject({ method: 'GET', url: `/probe/dep-1/logs?ticket=${ticket}` });
  assert.equal(again.statusCode, 401);
});

test('a ticket for another deployment or stream, or on a route without streamTicket, is 401', async () => {
  const other = testApp.deps.streamTickets.issue(issuer, 'dep-2', 'logs').ticket;
  assert.equal((await testApp.app.inject({ method: 'GET', url: `/probe/dep-1/logs?ticket=${other}` })).statusCode, 401);
  const exec = testApp.deps.streamTickets.issue(issuer, 'dep-1', 'exec').ticket;
  assert.equal((await testApp.app.inject({ method: 'GET', url: `/probe/dep-1/logs?ticket=${exec}` })).statusCode, 401);
  const plain = testApp.deps.streamTickets.issue(issuer, 'dep-1', 'logs').ticket;
  assert.equal((await testApp.app.inject({ method: 'GET', url: `/probe/dep-1/plain?ticket=${plain}` })).statusCode, 401);
  assert.equal((await testApp.app.inject({ method: 'GET', url: '/probe/dep-1/logs' })).statusCode, 401);
});

test('the ticket\'s principal still needs the route scope', async () => {
  const { ticket } = testApp.deps.streamTickets.issue(reader, 'dep-1', 'logs');
  assert.equal((await testApp.app.inject({ method: 'GET', url: `/probe/dep-1/logs?ticket=${ticket}` })).statusCode, 403);
});
