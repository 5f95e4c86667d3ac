// One rule ↔ the columns both stores keep (see migrations/001_rules_and_keys.sql
// and embedded/schema.ts): a rule with both a capacity and a refill rate (token
// bucket, GCRA) keeps them in their own columns, every other parameter goes to
// `params`, and shadow has its own flag. The databases check the columns' form
// only (a well-formed policy name, capacity and refill set together or not at
// all; migrations/010_policy_checks_by_form.sql), never which policies exist:
// parseRule checks every rule against the policy registry where it is written
// and again in fromColumns on every read, where a row that fails is logged and
// skipped. So a new policy is added in src/policies/ alone.
import { assertValidId } from '../core/ids.js';
import { parseRule, type Rule } from '../policies/rule.js';
import { assertTenantId } from './anonymous-tenant.js';
import { ANY } from './types.js';

export interface RuleColumns {
  policy: Rule['policy'];
  capacity: number | null;
  refillPerSecond: number | null;
  params: Record<string, unknown>;
  shadow: boolean;
}

export function toColumns(rule: Rule): RuleColumns {
  const { policy, shadow, ...rest } = rule as Rule & { capacity?: number; refillPerSecond?: number };
  const { capacity, refillPerSecond, ...params } = rest;
  // A bucket policy (token bucket, GCRA) keeps its two parameters in columns of their own.
  const hasBucket = capacity !== undefined && refillPerSecond !== undefined;
  return {
    policy,
    capacity: hasBucket ? (capacity ?? null) : null,
    refillPerSecond: hasBucket ? (refillPerSecond ?? null) : null,
    params,
    shadow: shadow === true,
  };
}

/** The rule object the columns spell, unchecked (parseRule checks it when it comes from a read). */
export function columnsToInput(columns: RuleColumns): Record<string, unknown> {
  const input: Record<string, unknown> = { policy: columns.policy, ...columns.params };
  if (columns.capacity !== null) input.capacity = columns.capacity;
  if (columns.refillPerSecond !== null) input.refillPerSecond = columns.refillPerSecond;
  if (columns.shadow) input.shadow = true;
  return input;
}

/** Rebuilds and re-validates a rule read from a store; throws SluiceError on a bad row. */
export function fromColumns(columns: RuleColumns, field: string): Rule {
  return parseRule(columnsToInput(columns), field);
}

/** A parsed rule as a store keeps it (e.g. `shadow: false` dropped): what a read of it would give. */
export function asStored(rule: Rule): Rule {
  return columnsToInput(toColumns(rule)) as Rule;
}

/** A tenant or route id of a rule: a valid id, or `*` for "any". */
export function assertRuleTarget(tenant: unknown, route: unknown): asserts tenant is string {
  if (tenant !== ANY) assertTenantId(tenant, 'tenant');
  if (route !== ANY) assertValidId(route, 'route');
}
