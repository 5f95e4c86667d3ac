// The rows of rate_limit_rule and api_key as either driver returns them, and the
// one mapping from a row to what the rest of Sluice sees. PostgreSQL hands back
// JSONB, booleans and Dates; SQLite hands back JSON text, 0/1 and ISO text.
import type { Rule } from '../policies/rule.js';
import { errorMessage, type RulesLogger } from './logger.js';
import { asStored, fromColumns, toColumns } from './rule-columns.js';
import type { ApiKeyInfo, ApiKeyRecord, SeedRule } from './store.js';
import type { StoredRule } from './types.js';

/** The columns every rule read selects, in both stores. */
export const RULE_COLUMNS = 'tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at';
/** The columns a rule write sets (updated_at is the database's own time). */
export const RULE_WRITE_COLUMNS = 'tenant_id, route_id, policy, capacity, refill_per_second, params, shadow';

/** The ON CONFLICT update of a rule's columns, in both stores, for rules and overrides; `updatedAt` is the new time's SQL. */
export const updateRuleColumns = (updatedAt: string): string =>
  `policy = excluded.policy, capacity = excluded.capacity, refill_per_second = excluded.refill_per_second, params = excluded.params, shadow = excluded.shadow, updated_at = ${updatedAt}`;

export interface RuleRow {
  tenant_id: string;
  route_id: string;
  policy: Rule['policy'];
  capacity: number | null;
  refill_per_second: number | null;
  params: Record<string, unknown> | string;
  shadow: boolean | number;
  updated_at: Date | string;
}

export interface KeyRow {
  id: string;
  tenant_id: string;
  created_at: Date | string;
  revoked_at: Date | string | null;
  /** Lower-case hex SHA-256 of the key. */
  hash: string;
}

const iso = (time: Date | string): string => (typeof time === 'string' ? time : time.toISOString());

/**
 * A row read from a store, checked once with parseRule: a database can hold
 * anything (a hand edit), and a row that fails is logged and skipped, never served.
 */
export function storedFromRow(row: RuleRow, logger: RulesLogger, location: string): StoredRule[] {
  try {
    const params = typeof row.params === 'string' ? (JSON.parse(row.params) as Record<string, unknown>) : row.params;
    const columns = { policy: row.policy, capacity: row.capacity, refillPerSecond: row.refill_per_second, params, shadow: Boolean(row.shadow) };
    const rule = fromColumns(columns, `rate_limit_rule[${row.tenant_id}/${row.route_id}]`);
    return [{ tenant: row.tenant_id, route: row.route_id, rule, updatedAt: iso(row.updated_at) }];
  } catch (error) {
    logger.error({ err: errorMessage(error), store: location }, 'skipping an invalid rule row');
    return [];
  }
}

/** What a write answers: the rule as written (already parsed at the boundary) and the row's time. */
export function storedFromWrite(tenant: string, route: string, rule: Rule, updatedAt: Date | string): StoredRule {
  return { tenant, route, rule: asStored(rule), updatedAt: iso(updatedAt) };
}

/** The values of RULE_WRITE_COLUMNS, in order; `params` as an object and `shadow` as a boolean. */
export function ruleValues(tenant: string, route: string, rule: Rule): [string, string, string, number | null, number | null, Record<string, unknown>, boolean] {
  const c = toColumns(rule);
  return [tenant, route, c.policy, c.capacity, c.refillPerSecond, c.params, c.shadow];
}

/** The config's rules as rows to seed; they were parsed when the config was loaded. */
export function seedValues(seeds: readonly SeedRule[]): ReturnType<typeof ruleValues>[] {
  return seeds.map((seed) => ruleValues(seed.tenant, seed.route, seed.rule));
}

export function seededMessage(logger: RulesLogger, count: number, location: string): void {
  if (count > 0) logger.info({ rules: count, store: location }, 'seeded the rule store from the config');
}

export function toKeyInfo(row: KeyRow): ApiKeyInfo {
  return { id: row.id, tenant: row.tenant_id, createdAt: iso(row.created_at), revokedAt: row.revoked_at === null ? undefined : iso(row.revoked_at) };
}

export function toKeyRecord(row: KeyRow): ApiKeyRecord {
  return { ...toKeyInfo(row), hash: row.hash };
}
