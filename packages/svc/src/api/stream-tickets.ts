// Stream tickets (DESIGN.md): a browser cannot set Authorization on EventSource/WebSocket, so it first asks
// `POST /auth/stream-ticket` for a single-use ticket, valid 30 s, for one deployment and one stream, and passes
// it as `?ticket=`. Tickets live in memory only: they are short-lived, and a restart simply invalidates them.
// The ticket keeps the caller's principal, so the stream route checks the same rights as the caller had.
import { randomBytes } from 'node:crypto';
import type { Principal } from './context.js';

export const STREAM_KINDS = ['logs', 'exec'] as const;
export type StreamKind = (typeof STREAM_KINDS)[number];
export const STREAM_TICKET_TTL_SECONDS = 30;
/** Upper bound on outstanding tickets, so a ticket-minting loop cannot grow memory without limit. */
const MAX_OUTSTANDING = 10_000;

interface Ticket {
  deploymentId: string;
  stream: StreamKind;
  principal: Principal;
  expiresAt: number;
}

export interface StreamTickets {
  issue(principal: Principal, deploymentId: string, stream: StreamKind): { ticket: string; expires_in: number };
  /**
   * Returns the principal the ticket was issued to and burns the ticket, or null when it is unknown, expired,
   * already used, or was issued for another deployment or stream (a mismatch burns it too).
   */
  consume(ticket: string, deploymentId: string, stream: StreamKind): Principal | null;
}

export function createStreamTickets(now: () => number = Date.now): StreamTickets {
  const tickets = new Map<string, Ticket>();

  function sweep(): void {
    const t = now();
    for (const [key, ticket] of tickets) if (ticket.expiresAt <= t) tickets.delete(key);
  }

  return {
    issue(principal, deploymentId, stream) {
      if (tickets.size >= MAX_OUTSTANDING) sweep();
      if (tickets.size >= MAX_OUTSTANDING) {
        // Drop the oldest: Map iterates in insertion order.
        const oldest = tickets.keys().next();
        if (!oldest.done) tickets.delete(oldest.value);
      }
      const ticket = 'svc_st_' + randomBytes(32).toString('hex');
      tickets.set(ticket, { deploymentId, stream, principal, expiresAt: now() + STREAM_TICKET_TTL_SECONDS * 1000 });
      return { ticket, expires_in: STREAM_TICKET_TTL_SECONDS };
    },
    consume(ticket, deploymentId, stream) {
      const found = tickets.get(ticket);
      if (!found) return null;
      tickets.delete(ticket);
      if (found.expiresAt <= now() || found.deploymentId !== deploymentId || found.stream !== stream) return null;
      return found.principal;
    },
  };
}
