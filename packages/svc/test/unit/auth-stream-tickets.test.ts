import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createStreamTickets } from '../../src/api/stream-tickets.js';
import type { Principal } from '../../src/api/context.js';

const principal: Principal = { tokenId: 't', userId: 'u', username: 'admin', kind: 'pat', scopes: ['admin'], namespaces: ['prod'] };

test('a ticket is single-use and returns the issuing principal', () => {
  const tickets = createStreamTickets();
  const { ticket, expires_in } = tickets.issue(principal, 'd1', 'logs');
  assert.equal(expires_in, 30);
  assert.deepEqual(tickets.consume(ticket, 'd1', 'logs'), principal);
  assert.equal(tickets.consume(ticket, 'd1', 'logs'), null);
});

test('a ticket is bound to its deployment and stream; a mismatch burns it', () => {
  const tickets = createStreamTickets();
  const a = tickets.issue(principal, 'd1', 'logs').ticket;
  assert.equal(tickets.consume(a, 'd2', 'logs'), null);
  assert.equal(tickets.consume(a, 'd1', 'logs'), null);
  const b = tickets.issue(principal, 'd1', 'logs').ticket;
  assert.equal(tickets.consume(b, 'd1', 'exec'), null);
  assert.equal(tickets.consume('svc_st_unknown', 'd1', 'logs'), null);
});

test('a ticket expires after 30 s', () => {
  let now = 1_000_000;
  const tickets = createStreamTickets(() => now);
  const a = tickets.issue(principal, 'd1', 'exec').ticket;
  const b = tickets.issue(principal, 'd1', 'exec').ticket;
  now += 29_999;
  assert.deepEqual(tickets.consume(a, 'd1', 'exec'), principal);
  now += 1;
  assert.equal(tickets.consume(b, 'd1', 'exec'), null);
});
