// Where a webhook may point (spec "Webhooks"): http or https, never loopback, link-local or the unspecified
// address; private ranges (RFC 1918, IPv6 unique-local) are allowed. Pure, so the same rule is applied when a
// webhook is created (on the literal host) and again at send time on every address the host name resolves
// to (refusedAddressReason), which stops a DNS name that points at loopback.

export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** Why `raw` is refused as a webhook URL, or null when it is allowed. */
export function webhookUrlProblem(raw: string): string | null {
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return `must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'scheme must be http or https';
  // Credentials in a URL end up in logs and listings; the signature secret is the way to authenticate.
  if (url.username !== '' || url.password !== '') return 'must not contain credentials';
  const host = url.hostname;
  if (host === '') return 'must name a host';
  if (host.startsWith('[') && host.endsWith(']')) return refusedAddressReason(host.slice(1, -1));
  if (parseIPv4(host)) return refusedAddressReason(host);
  // The URL parser has lowercased the name; a trailing dot is the same name written as fully qualified.
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name === 'localhost' || name.endsWith('.localhost')) return 'must not target loopback (localhost)';
  return null;
}

/**
 * Why a connection to the IP address `address` is refused, or null when it is allowed. Also returns a reason
 * for text that is not an IP address, so a caller can never connect to something it did not check.
 */
export function refusedAddressReason(address: string): string | null {
  const v4 = parseIPv4(address);
  if (v4) return refusedIPv4Reason(v4);
  const v6 = parseIPv6(address);
  if (!v6) return `'${address}' is not an IP address`;
  if (v6.every((group) => group === 0)) return 'must not target the unspecified address (::)';
  if (v6.slice(0, 7).every((group) => group === 0) && v6[7] === 1) return 'must not target loopback (::1)';
  const first = v6[0] ?? 0;
  if ((first & 0xffc0) === 0xfe80) return 'must not target link-local addresses (fe80::/10)';
  if ((first & 0xff00) === 0xff00) return 'must not target multicast addresses';
  const embedded = embeddedIPv4(v6);
  if (embedded) {
    const reason = refusedIPv4Reason(embedded);
    if (reason) return `${reason} (IPv4 embedded in IPv6)`;
  }
  return null;
}

function refusedIPv4Reason([a, b]: readonly number[]): string | null {
  if (a === 127) return 'must not target loopback (127.0.0.0/8)';
  if (a === 169 && b === 254) return 'must not target link-local addresses (169.254.0.0/16)';
  if (a === 0) return 'must not target the unspecified network (0.0.0.0/8)';
  if (a !== undefined && a >= 224) return 'must not target multicast or broadcast addresses';
  return null;
}

/** IPv4 carried inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d). */
function embeddedIPv4(groups: readonly number[]): number[] | null {
  const [g0, g1, g2, g3, g4, g5, g6 = 0, g7 = 0] = groups;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  const mapped = zeroPrefix && g5 === 0xffff;
  const compatible = zeroPrefix && g5 === 0;
  const nat64 = g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0;
  if (!mapped && !compatible && !nat64) return null;
  return [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff];
}

/** Strict dotted-quad form (what the URL parser and DNS resolvers produce). */
export function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const octets: number[] = [];
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    octets.push(value);
  }
  return octets;
}

/** Eight 16-bit groups, or null. Accepts `::` compression and a trailing dotted IPv4; no zone ids. */
export function parseIPv6(text: string): number[] | null {
  if (text.length === 0 || text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parseSide = (side: string, allowTrailingV4: boolean): number[] | null => {
    if (side === '') return [];
    const pieces = side.split(':');
    const groups: number[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i] ?? '';
      if (allowTrailingV4 && i === pieces.length - 1 && piece.includes('.')) {
        const v4 = parseIPv4(piece);
        if (!v4) return null;
        groups.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return null;
        groups.push(parseInt(piece, 16));
      }
    }
    return groups;
  };
  if (halves.length === 1) {
    const groups = parseSide(text, true);
    return groups && groups.length === 8 ? groups : null;
  }
  const head = parseSide(halves[0] ?? '', false);
  const tail = parseSide(halves[1] ?? '', true);
  if (!head || !tail || head.length + tail.length > 7) return null;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}
