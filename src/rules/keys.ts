// API keys: 32 random bytes, base64url, shown once. Stores keep only the SHA-256,
// so a leaked database (or snapshot file) gives no usable key.
import { createHash, randomBytes } from 'node:crypto';
import { SluiceError } from '../core/errors.js';

const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function newApiKey(): string {
  return randomBytes(32).toString('base64url');
}

/** A short, unguessable id to list and revoke a key by (never the key itself). */
export function newKeyId(): string {
  return `key_${randomBytes(9).toString('base64url')}`;
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

export function hashApiKeyHex(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function assertValidKeyId(id: unknown, field = 'id'): asserts id is string {
  if (typeof id !== 'string' || !KEY_ID_PATTERN.test(id)) {
    throw new SluiceError('ERR_ID_INVALID', 'must be 1 to 64 letters, digits, _ or -', field);
  }
}
