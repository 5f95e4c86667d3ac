// API keys: 32 random bytes, base64url, shown once. Stores keep only the SHA-256,
// so a leaked database (or snapshot file) gives no usable key.
import * as crypto from 'node:crypto';
import { SluiceError } from '../core/errors.js';

const { createHash, randomBytes } = crypto;
/**
 * Node 20.12+ hashes in one call, with no Hash object per key: a third of
 * createHash's CPU, on every request that carries a key,
 * and no native object for the GC to finalize. Older Node 20 has none.
 */
const oneShotHash: typeof crypto.hash | undefined = (crypto as Partial<typeof crypto>).hash;

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
  if (oneShotHash !== undefined) return oneShotHash('sha256', key, 'hex');
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function assertValidKeyId(id: unknown, field = 'id'): asserts id is string {
  if (typeof id !== 'string' || !KEY_ID_PATTERN.test(id)) {
    throw new SluiceError('ERR_ID_INVALID', 'must be 1 to 64 letters, digits, _ or -', field);
  }
}
