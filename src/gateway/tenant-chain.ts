// API key → tenant when keys come from two places: the rule store's key table
// (managed through the admin API) first, then the config file's keys and its
// unknown-key policy. The key is hashed once for both.
import { hashApiKeyHex } from '../rules/keys.js';
import type { TenantResolver } from '../rules/types.js';

export interface StoredKeyResolver {
  /** The tenant of the active stored key with this hex SHA-256. */
  tenantForHash(keyHash: string): string | undefined;
  /** Whether the tenant owns an active stored key. */
  isKeyedTenant(tenant: string): boolean;
}

export interface ConfiguredKeyResolver {
  tenantFor(apiKey: string, keyHash: string): string | undefined;
}

export class ChainedTenantResolver implements TenantResolver {
  constructor(
    private readonly stored: StoredKeyResolver,
    private readonly configured: ConfiguredKeyResolver,
  ) {}

  tenantFor(apiKey: string): string | undefined {
    const keyHash = hashApiKeyHex(apiKey);
    const tenant = this.stored.tenantForHash(keyHash);
    if (tenant !== undefined) return tenant;
    const fromConfig = this.configured.tenantFor(apiKey, keyHash);
    // Under `unknownKeys: default-rule` a key names its own tenant; never the
    // name of a tenant that has real keys, or anyone could spend its limit.
    if (fromConfig === apiKey && this.stored.isKeyedTenant(apiKey)) return undefined;
    return fromConfig;
  }
}
