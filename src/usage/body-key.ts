// A `key: { body: model }` limit: tenant × a field of the request's JSON body,
// in the tenant's hash slot (so a tenant's limits are still decided in one
// call): `rl:{tenant}:~b.<hash>.<limit id>`. The value is hashed: whatever a
// client writes in its body never becomes a key name.
import { createHash } from 'node:crypto';
import { DERIVED_PREFIX } from '../core/ids.js';
import { valueAt } from './json-path.js';

/** `~b.` and 64 bits of the value's SHA-256: a few models per tenant, never a collision that matters. */
const HASH_HEX = 16;
/** Characters the hash adds before the limit id in the bucket name. */
export const BODY_ID_LENGTH = DERIVED_PREFIX.length + 2 + HASH_HEX;

/** The bucket name of a body-keyed limit, or undefined when the body lacks the field (or it is not a string or number). */
export function bodyBucketName(json: unknown, field: readonly string[], limitId: string): string | undefined {
  const value = valueAt(json, field);
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const text = String(value);
  if (text === '') return undefined;
  return `${DERIVED_PREFIX}b.${createHash('sha256').update(text).digest('hex').slice(0, HASH_HEX)}.${limitId}`;
}
