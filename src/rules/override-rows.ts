// Rows of limit_override (migrations/004_limit_overrides.sql, embedded/schema.ts)
// as either driver returns them. The rule takes the same columns as a rule of
// rate_limit_rule (rule-columns.ts), with the limit id and selector in place
// of tenant and route; every row read is checked again, as rules are.
import { assertValidId } from '../core/ids.js';
import type { Rule } from '../policies/rule.js';
import { errorMessage, type RulesLogger } from './logger.js';
import { parseSelector } from './override-selector.js';
import { asStored, fromColumns } from './rule-columns.js';
import { ruleValues, type RuleRow } from './rule-rows.js';
import type { StoredOverride } from './types.js';

export const OVERRIDE_COLUMNS = 'limit_id, selector, policy, capacity, refill_per_second, params, shadow, updated_at';
export const OVERRIDE_WRITE_COLUMNS = 'limit_id, selector, policy, capacity, refill_per_second, params, shadow';

export type OverrideRow = Omit<RuleRow, 'tenant_id' | 'route_id'> & { limit_id: string; selector: string };

/** The limit id checked and the selector in canonical form (what the store keys by); SluiceErrors name `limitId` and `selector`. */
export function overrideTarget(limitId: unknown, selector: unknown): [string, string] {
  assertValidId(limitId, 'limitId');
  return [limitId, parseSelector(selector, 'selector').text];
}

/**
 * The target when the limit id is valid and the selector already canonical,
 * else undefined. A row (a hand edit) or a notification with another spelling
 * is never served: looked up by its canonical form it would not be found, so
 * a change batch and a full load could disagree about it.
 */
export function canonicalTarget(limitId: unknown, selector: unknown): [string, string] | undefined {
  try {
    const target = overrideTarget(limitId, selector);
    return target[1] === selector ? target : undefined;
  } catch {
    return undefined;
  }
}

const iso = (time: Date | string): string => (typeof time === 'string' ? time : time.toISOString());

/**
 * A row, re-validated; one that fails (a hand edit) is logged and skipped, never
 * served. Logs name the limit, never the selector (it may be a client's address).
 */
export function overrideFromRow(row: OverrideRow, logger: RulesLogger, location: string): StoredOverride[] {
  const target = canonicalTarget(row.limit_id, row.selector);
  if (!target) {
    logger.error({ limit: String(row.limit_id).slice(0, 64), store: location }, 'skipping an override row with an invalid limit id, or a selector not in canonical form');
    return [];
  }
  try {
    const params = typeof row.params === 'string' ? (JSON.parse(row.params) as Record<string, unknown>) : row.params;
    const columns = { policy: row.policy, capacity: row.capacity, refillPerSecond: row.refill_per_second, params, shadow: Boolean(row.shadow) };
    const rule = fromColumns(columns, `limit_override[${target[0]}]`);
    return [{ limitId: target[0], selector: target[1], rule, updatedAt: iso(row.updated_at) }];
  } catch (error) {
    logger.error({ err: errorMessage(error), store: location }, 'skipping an invalid override row');
    return [];
  }
}

/** What a write answers: the override as written and the row's time. */
export function overrideFromWrite(limitId: string, selector: string, rule: Rule, updatedAt: Date | string): StoredOverride {
  return { limitId, selector, rule: asStored(rule), updatedAt: iso(updatedAt) };
}

/** The values of OVERRIDE_WRITE_COLUMNS in order: the rule's columns laid out as for a rule. */
export const overrideValues = (limitId: string, selector: string, rule: Rule): ReturnType<typeof ruleValues> => ruleValues(limitId, selector, rule);
