// API key → tenant from the config's key list. Keys are held only as SHA-256
// hashes. With `unknownKeys: default-rule` an unknown key names its own tenant
// (when it is a valid id and not the name of a keyed tenant, so nobody can
// spend a real tenant's limit by sending its name as a key).
import { hashApiKeyHex } from '../rules/keys.js';
import type { TenantKey } from '../config/types.js';
import { isValidId } from '../core/ids.js';
import type { TenantResolver } from '../rules/types.js';

export interface StaticTenantOptions {
  keys: readonly TenantKey[];
  unknownKeys: 'reject' | 'default-rule';
}

export class StaticTenantResolver implements TenantResolver {
  private readonly byHash: Map<string, string>;
  private readonly keyedTenants: Set<string>;
  private readonly acceptUnknown: boolean;

  constructor(options: StaticTenantOptions) {
    this.byHash = new Map(options.keys.map((entry) => [entry.keyHash, entry.tenant]));
    this.keyedTenants = new Set(options.keys.map((entry) => entry.tenant));
    this.acceptUnknown = options.unknownKeys === 'default-rule';
  }

  /** `keyHash`: the key's hex SHA-256 when the caller already computed it. */
  tenantFor(apiKey: string, keyHash?: string): string | undefined {
    const tenant = this.byHash.size > 0 ? this.byHash.get(keyHash ?? hashApiKeyHex(apiKey)) : undefined;
    if (tenant !== undefined || !this.acceptUnknown) return tenant;
    return isValidId(apiKey) && !this.keyedTenants.has(apiKey) ? apiKey : undefined;
  }
}
