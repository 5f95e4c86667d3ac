// API key → tenant: the key's SHA-256 is looked up in each key table in turn
// (the rule store's keys, then the config file's). A key no table knows is
// refused, or under `unknownKeys: default-rule` gets a tenant of its own that
// no named tenant can be (see anonymous-tenant.ts).
import { anonymousTenant } from './anonymous-tenant.js';
import { hashApiKeyHex } from './keys.js';
import type { KeyOwner, TenantKey, TenantResolver } from './types.js';

export interface KeyTable {
  /** The tenant of the active key whose hex SHA-256 is `keyHash`. */
  tenantForHash(keyHash: string): string | undefined;
  /** The tenant with the key's own plan (the rule cache's keys). */
  identityForHash?(keyHash: string): KeyOwner | undefined;
}

export type UnknownKeys = 'reject' | 'default-rule';

export class KeyTenantResolver implements TenantResolver {
  private readonly acceptUnknown: boolean;

  constructor(
    private readonly tables: readonly KeyTable[],
    unknownKeys: UnknownKeys,
  ) {
    this.acceptUnknown = unknownKeys === 'default-rule';
  }

  tenantFor(apiKey: string): string | undefined {
    if (this.tables.length === 0 && !this.acceptUnknown) return undefined;
    const keyHash = hashApiKeyHex(apiKey);
    for (const table of this.tables) {
      const tenant = table.tenantForHash(keyHash);
      if (tenant !== undefined) return tenant;
    }
    return this.acceptUnknown ? anonymousTenant(keyHash) : undefined;
  }

  identityFor(apiKey: string): KeyOwner | undefined {
    if (this.tables.length === 0 && !this.acceptUnknown) return undefined;
    const keyHash = hashApiKeyHex(apiKey);
    for (const table of this.tables) {
      const identity = table.identityForHash?.(keyHash);
      if (identity) return identity;
      const tenant = table.tenantForHash(keyHash);
      if (tenant !== undefined) return { tenant };
    }
    return this.acceptUnknown ? { tenant: anonymousTenant(keyHash) } : undefined;
  }
}

/** The config file's `tenants.keys` (already hashed at load). */
export function configKeyTable(keys: readonly TenantKey[]): KeyTable {
  const byHash = new Map(keys.map((entry) => [entry.keyHash, entry.tenant]));
  return { tenantForHash: (keyHash) => byHash.get(keyHash) };
}
