import type { Reply, RequestContext } from '../context.js';

/**
 * One step of a route's chain, built when the route table is compiled. `handle` returns a Reply to answer the
 * request itself, or null to pass it on; only steps that need I/O (forward auth) return a Promise.
 */
export interface Middleware {
  readonly name: string;
  handle(ctx: RequestContext): Reply | null | Promise<Reply | null>;
}
