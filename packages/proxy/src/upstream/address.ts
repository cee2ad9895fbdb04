// Address forms shared by the upstream pools and the listeners: one spelling of `host:port` everywhere.
import { isIPv6 } from 'node:net';

/** `address:port`, IPv6 addresses in brackets: the form of `unhealthy_backends` and of affinity keys. */
export function backendKey(address: string, port: number): string {
  return isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`;
}

export interface HostPort {
  host: string;
  port: number;
}

/**
 * Parses a `listen_address` (`host:port`, `[v6]:port`, or `:port` meaning all IPv4 interfaces). Port 0 asks the
 * kernel for a free port (tests). Returns null for anything else.
 */
export function parseListenAddress(value: string): HostPort | null {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\[\]\s]*)):(\d{1,5})$/.exec(value);
  if (!match) return null;
  const port = Number(match[3]);
  if (!Number.isInteger(port) || port > 65535) return null;
  const v6 = match[1];
  if (v6 !== undefined) return isIPv6(v6) ? { host: v6, port } : null;
  const host = match[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}
