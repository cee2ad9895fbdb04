// Password hashing with scrypt (memory-hard, in node:crypto, no native add-on). Stored form:
// `scrypt$<log2 N>$<r>$<p>$<salt base64>$<hash base64>`, so parameters can be raised later without breaking old rows.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG2_N = 15; // N = 32768, r = 8: 32 MiB of memory per hash, ~50-100 ms on one core.
const BLOCK_SIZE = 8;
const PARALLELISM = 1;
const SALT_BYTES = 16;
const KEY_BYTES = 32;

/** Thrown when more password checks are waiting than MAX_WAITING: the caller should answer 503. */
export class KdfBusyError extends Error {}

/**
 * scrypt runs on libuv's thread pool (4 threads by default), which DNS lookups and file I/O share. At most
 * MAX_RUNNING derivations run at once, so a login flood cannot starve the rest of the server; beyond MAX_WAITING
 * queued ones, new requests are refused at once instead of piling up memory and latency.
 */
const MAX_RUNNING = 2;
const MAX_WAITING = 32;

export function createLimiter(maxRunning: number, maxWaiting: number) {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async function limited<T>(task: () => Promise<T>): Promise<T> {
    if (running >= maxRunning) {
      if (waiting.length >= maxWaiting) throw new KdfBusyError('too many password checks in progress');
      await new Promise<void>((resolveTurn) => waiting.push(resolveTurn));
    } else {
      running++;
    }
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      // The slot passes straight to the next waiter; `running` only drops when nobody waits.
      if (next) next();
      else running--;
    }
  };
}

const kdfSlot = createLimiter(MAX_RUNNING, MAX_WAITING);

function derive(password: string, salt: Buffer, options: ScryptOptions, keyLength: number): Promise<Buffer> {
  return kdfSlot(
    () =>
      new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
      }),
  );
}

function optionsFor(log2N: number, r: number, p: number): ScryptOptions {
  const N = 2 ** log2N;
  return { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, optionsFor(LOG2_N, BLOCK_SIZE, PARALLELISM), KEY_BYTES);
  return ['scrypt', LOG2_N, BLOCK_SIZE, PARALLELISM, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Constant-time comparison of the derived key. A malformed stored hash verifies as false, never throws. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [log2N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![log2N, r, p].every((n) => Number.isInteger(n) && n > 0 && n <= 20)) return false;
  const salt = Buffer.from(parts[4] ?? '', 'base64');
  const expected = Buffer.from(parts[5] ?? '', 'base64');
  if (salt.length === 0 || expected.length === 0) return false;
  const actual = await derive(password, salt, optionsFor(log2N, r, p), expected.length);
  return timingSafeEqual(actual, expected);
}

/**
 * A hash of a random password, verified against when the username is unknown, so an unknown user costs the
 * same KDF time as a wrong password and the two cannot be told apart by timing.
 */
let decoy: Promise<string> | undefined;
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(24).toString('base64'));
  return decoy;
}

/** A random password for the seeded administrator: 24 base64url characters (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
