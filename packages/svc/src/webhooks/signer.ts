// Delivery headers, pure. `X-Svc-Signature` is the spec's: HMAC-SHA256 of the raw body keyed by the webhook's
// secret. It does not cover the delivery id or the time, so a captured request could be replayed later with
// fresh headers; `X-Svc-Signature-Timestamped` covers `<delivery id>.<timestamp>.<body>`, which lets a
// receiver reject replays (docs/svc/webhooks.md, "Verifying a delivery").
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const HEADER_EVENT = 'x-svc-event';
export const HEADER_SIGNATURE = 'x-svc-signature';
export const HEADER_SIGNATURE_TIMESTAMPED = 'x-svc-signature-timestamped';
export const HEADER_DELIVERY = 'x-svc-delivery';
export const HEADER_TIMESTAMP = 'x-svc-timestamp';
export const USER_AGENT = 'svc-webhooks/1';

function hmacHex(secret: string, data: string): string {
  return createHmac('sha256', secret).update(data, 'utf8').digest('hex');
}

/** `sha256=<hex HMAC-SHA256 of the raw body>`. */
export function bodySignature(secret: string, body: string): string {
  return `sha256=${hmacHex(secret, body)}`;
}

/** `sha256=<hex HMAC-SHA256 of "<deliveryId>.<timestamp>.<body>">`. */
export function timestampedSignature(secret: string, deliveryId: string, timestamp: number, body: string): string {
  return `sha256=${hmacHex(secret, `${deliveryId}.${timestamp}.${body}`)}`;
}

/** Every header of one attempt. `timestamp` is Unix seconds of the attempt (it changes on every retry). */
export function deliveryHeaders(input: { secret: string; kind: string; deliveryId: string; timestamp: number; body: string }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    [HEADER_EVENT]: input.kind,
    [HEADER_DELIVERY]: input.deliveryId,
    [HEADER_TIMESTAMP]: String(input.timestamp),
    [HEADER_SIGNATURE]: bodySignature(input.secret, input.body),
    [HEADER_SIGNATURE_TIMESTAMPED]: timestampedSignature(input.secret, input.deliveryId, input.timestamp, input.body),
  };
}

/** Constant-time comparison of two signature header values (what a receiver does). */
export function signaturesEqual(expected: string, received: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(received, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export type ReceivedVerdict = 'ok' | 'bad_signature' | 'stale' | 'malformed';

/**
 * The receiver's check, as documented: the timestamped signature matches, and the timestamp is within
 * `toleranceSeconds` of the receiver's clock. (Deduplication by delivery id is the receiver's store.)
 */
export function verifyDelivery(
  secret: string,
  headers: { deliveryId: string | undefined; timestamp: string | undefined; signatureTimestamped: string | undefined },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): ReceivedVerdict {
  const { deliveryId, timestamp, signatureTimestamped } = headers;
  if (!deliveryId || !timestamp || !signatureTimestamped || !/^[0-9]{1,12}$/.test(timestamp)) return 'malformed';
  const seconds = Number(timestamp);
  if (!signaturesEqual(timestampedSignature(secret, deliveryId, seconds, body), signatureTimestamped)) return 'bad_signature';
  if (Math.abs(nowSeconds - seconds) > toleranceSeconds) return 'stale';
  return 'ok';
}

/**
 * The delivery id: a name-based UUID (RFC 4122 version 5) of the event id in the webhook id's namespace. It is
 * the same on every attempt and every redelivery of that event to that webhook, and differs between webhooks,
 * so it is the key a receiver deduplicates on. Derived, so enqueueing stores nothing more.
 */
export function deliveryId(eventId: string, webhookId: string): string {
  const namespace = uuidBytes(webhookId);
  const hash = createHash('sha1').update(namespace).update(eventId, 'utf8').digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The 16 bytes of a UUID; any other text (ids are UUIDs, but stay total) is hashed to 16 bytes. */
function uuidBytes(id: string): Buffer {
  const hex = id.replace(/-/g, '');
  if (/^[0-9a-fA-F]{32}$/.test(hex)) return Buffer.from(hex, 'hex');
  return createHash('sha256').update(id, 'utf8').digest().subarray(0, 16);
}
