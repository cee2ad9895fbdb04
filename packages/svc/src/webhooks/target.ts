// The URL rule again at send time (spec "Webhooks"): the stored URL is re-checked with the same rule as at
// creation (domain/webhook-url.ts), and a host NAME is checked on every address it resolves to. The check runs
// inside the socket's own `lookup`, so the connection goes to exactly the address that was checked: a DNS
// answer cannot change between the check and the connect (DNS rebinding).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { refusedAddressReason, webhookUrlProblem } from '../domain/webhook-url.js';

/** Resolves a name to all its addresses (node:dns `lookup` with `all: true`); injectable for tests. */
export type Resolver = (hostname: string, family: number, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

export const systemResolver: Resolver = (hostname, family, callback) => {
  dnsLookup(hostname, { all: true, family, verbatim: true }, (error, addresses) => callback(error, error ? [] : addresses));
};

export class RefusedTargetError extends Error {
  readonly code = 'ERR_SVC_WEBHOOK_TARGET_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'RefusedTargetError';
  }
}

/**
 * Why the resolved `addresses` of `hostname` may not be connected to, or null. Every address must pass: a name
 * that resolves to a public address AND to loopback is refused, since the connect could pick either.
 */
export function refusedResolutionReason(hostname: string, addresses: readonly string[]): string | null {
  if (addresses.length === 0) return `'${hostname}' resolved to no address`;
  for (const address of addresses) {
    const reason = refusedAddressReason(address);
    if (reason) return `'${hostname}' resolves to ${address}: ${reason}`;
  }
  return null;
}

/** The creation-time rule on the stored URL (literal IPs are connected to without any lookup). */
export function refusedUrlReason(url: string): string | null {
  const problem = webhookUrlProblem(url);
  return problem ? `url refused at send time: ${problem}` : null;
}

/** A `net.connect` lookup that resolves with `resolver` and fails the connection unless every address passes. */
export function guardedLookup(resolver: Resolver = systemResolver): LookupFunction {
  return ((hostname: string, options: { family?: number | string; all?: boolean }, callback: (...args: unknown[]) => void) => {
    const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
    resolver(hostname, family, (error, addresses) => {
      if (error) return callback(error);
      const reason = refusedResolutionReason(
        hostname,
        addresses.map((a) => a.address),
      );
      if (reason) return callback(new RefusedTargetError(reason));
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      return first ? callback(null, first.address, first.family) : callback(new RefusedTargetError(`'${hostname}' resolved to no address`));
    });
  }) as LookupFunction;
}
