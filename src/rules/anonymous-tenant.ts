// Under `unknownKeys: default-rule` an unknown key (never issued, or revoked)
// gets a tenant of its own, derived from the key's SHA-256. Those ids start with
// `~`, which configured and stored tenant ids may not, so an unknown key can
// never take a named tenant's rule or share its buckets — not even a key equal
// to a tenant's name or a tenant's revoked key. The id uses only hex digits
// after the prefix (a valid id: no braces or colons reach the Redis key), and
// the raw key never appears in a Redis key or a log line.
import { assertValidId } from '../core/ids.js';
import { SluiceError } from '../core/errors.js';

export const ANONYMOUS_PREFIX = '~';

/** `~` and the first 128 bits of the key's hex SHA-256 (the hash the key tables are looked up by). */
export function anonymousTenant(keyHashHex: string): string {
  return ANONYMOUS_PREFIX + keyHashHex.slice(0, 32);
}

export function isReservedTenant(id: string): boolean {
  return id.startsWith(ANONYMOUS_PREFIX);
}

export const RESERVED_TENANT_MESSAGE = `must not start with ${ANONYMOUS_PREFIX} (reserved for the tenants of unknown keys)`;

/** A tenant id an operator may name in a rule or a key: a valid id outside the unknown keys' namespace. */
export function assertTenantId(id: unknown, field: string): asserts id is string {
  assertValidId(id, field);
  if (isReservedTenant(id)) throw new SluiceError('ERR_ID_INVALID', RESERVED_TENANT_MESSAGE, field);
}
