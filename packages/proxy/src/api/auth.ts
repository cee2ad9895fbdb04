// HTTP Basic authentication of API users: SHA-256 of the received password compared in constant time.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiUser } from '../config/config-schema.js';
import { parseBasic } from '../dataplane/middlewares/basic-auth.js';

/** Compared against when the user name is unknown, so both paths cost the same. */
const DUMMY_HASH = Buffer.alloc(32);

/** The user whose name and password match, or null. Constant time in the password. */
export function authenticate(users: readonly ApiUser[], header: string | undefined): ApiUser | null {
  const credentials = parseBasic(header);
  if (!credentials) return null;
  const received = createHash('sha256').update(credentials.password, 'utf8').digest();
  const user = users.find((candidate) => candidate.name === credentials.user);
  const expected = user ? Buffer.from(user.hash, 'hex') : DUMMY_HASH;
  const equal = expected.length === received.length && timingSafeEqual(expected, received);
  return user && equal ? user : null;
}
