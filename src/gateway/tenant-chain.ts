// API key → tenant when keys come from two places: the rule store's key table
// (managed through the admin API) first, then the config file's keys and its
// unknown-key policy.
import type { TenantResolver } from '../rules/types.js';

export interface StoredKeyResolver extends TenantResolver {
  /** Whether the tenant owns an active stored key. */
  isKeyedTenant(tenant: string): boolean;
}

export class ChainedTenantResolver implements TenantResolver {
  constructor(
    private readonly stored: StoredKeyResolver,
    private readonly configured: TenantResolver,
  ) {}

  tenantFor(apiKey: string): string | undefined {
    const tenant = this.stored.tenantFor(apiKey);
    if (tenant !== undefined) return tenant;
    const fromConfig = this.configured.tenantFor(apiKey);
    // Under `unknownKeys: default-rule` a key names its own tenant; never the
    // name of a tenant that has real keys, or anyone could spend its limit.
    if (fromConfig === apiKey && this.stored.isKeyedTenant(apiKey)) return undefined;
    return fromConfig;
  }
}
