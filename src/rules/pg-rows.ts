// The rows of the PostgreSQL tables as `pg` returns them, and the columns read.
import type { Rule } from '../core/rule.js';
import type { ApiKeyInfo } from './store.js';

export const RULE_COLUMNS = 'tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at';
export const KEY_COLUMNS = "id, tenant_id, created_at, revoked_at, encode(key_hash, 'hex') AS hash";

export interface RuleRow {
  tenant_id: string;
  route_id: string;
  policy: Rule['policy'];
  capacity: number | null;
  refill_per_second: number | null;
  params: Record<string, unknown>;
  shadow: boolean;
  updated_at: Date;
}

export interface KeyRow {
  id: string;
  tenant_id: string;
  created_at: Date;
  revoked_at: Date | null;
  hash: string;
}

export function toKeyInfo(row: KeyRow): ApiKeyInfo {
  return { id: row.id, tenant: row.tenant_id, createdAt: row.created_at.toISOString(), revokedAt: row.revoked_at?.toISOString() };
}
