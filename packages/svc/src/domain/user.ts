// User rules (spec "Users" and "Limits"): pure, every violation reported at once.
import { checkLength, type Violation } from './violations.js';

export const USERNAME_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9._-]*$/;

export function checkUsername(username: string, out: Violation[], path = 'username'): void {
  checkLength(username, 2, 50, path, 'user.username.length', out);
  if (!USERNAME_PATTERN.test(username)) {
    out.push({
      property_path: path,
      message: 'must start with a letter or digit, then letters, digits, ".", "_" or "-"',
      code: 'user.username.format',
    });
  }
}

export function checkPassword(password: string, out: Violation[], path = 'password'): void {
  checkLength(password, 8, 128, path, 'user.password.length', out);
}

export interface UserChanges {
  username?: string;
  password?: string;
}

/** POST /users needs both fields; PUT /users/{id} checks only the fields present. */
export function validateUserChanges(changes: UserChanges): Violation[] {
  const out: Violation[] = [];
  if (changes.username !== undefined) checkUsername(changes.username, out);
  if (changes.password !== undefined) checkPassword(changes.password, out);
  return out;
}
