// AES-256-GCM for secret values, keyed by SVC_SECRET_KEY. A fresh random 96-bit nonce per value; the stored
// form is nonce || ciphertext || tag, so a value can be decrypted after a restart with the same key.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export class SecretKeyError extends Error {}

/** Parses SVC_SECRET_KEY: base64 (standard or url-safe) that decodes to exactly 32 bytes. */
export function parseSecretKey(raw: string | undefined): Buffer {
  if (raw === undefined || raw.trim() === '') {
    throw new SecretKeyError('SVC_SECRET_KEY is not set: it must be the base64 form of 32 random bytes (e.g. `openssl rand -base64 32`)');
  }
  const text = raw.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) {
    throw new SecretKeyError('SVC_SECRET_KEY is not valid base64');
  }
  const key = Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  if (key.length !== 32) {
    throw new SecretKeyError(`SVC_SECRET_KEY must decode to exactly 32 bytes (got ${key.length})`);
  }
  return key;
}

export interface SecretBox {
  seal(plaintext: Buffer, associatedData: string): Buffer;
  open(sealed: Buffer, associatedData: string): Buffer;
}

/**
 * `associatedData` binds a ciphertext to its row (e.g. the secret id), so a ciphertext copied onto another
 * row fails to decrypt instead of silently yielding another secret's value.
 */
export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new SecretKeyError('secret key must be 32 bytes');
  return {
    seal(plaintext, associatedData) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
      return Buffer.concat([nonce, body, cipher.getAuthTag()]);
    },
    open(sealed, associatedData) {
      if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error('sealed value is truncated');
      const nonce = sealed.subarray(0, NONCE_BYTES);
      const tag = sealed.subarray(sealed.length - TAG_BYTES);
      const body = sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', key, nonce);
      decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]);
    },
  };
}
