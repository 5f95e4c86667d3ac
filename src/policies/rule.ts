// What a rule is, and the one parser every rule passes through, whether it
// comes from the config file, the admin API, PostgreSQL or the library API.
// Each policy's schema is its own (`<policy>/rule.ts`, built from the shared
// fields of rule-fields.ts); the registry (index.ts) lists them, and the
// parser asks the registry which policies exist and which take calendar
// windows. zod is loaded by the first rule parsed (or schema read), not by
// `import 'sluice'` (docs/library.md#weight).
import type { z as Zod } from 'zod';
import { SluiceError } from '../core/errors.js';
import { lazily } from '../core/lazy.js';
import { loadPackage } from '../core/load-package.js';
import { isPolicyName, POLICIES, POLICY_REGISTRY, type PolicyName, policyOf, type Rule } from './index.js';

export { type FixedWindowRule, fixedWindowSchema } from './fixed-window/rule.js';
export { type GcraRule, gcraSchema } from './gcra/rule.js';
export { POLICIES, type PolicyName, type Rule, type RuleOf } from './index.js';
export { type LeakyBucketRule, leakyBucketSchema } from './leaky-bucket/rule.js';
export { MAX_COUNT, MAX_RATE, MAX_WINDOW_MS, MIN_REGION_SHARE } from './rule-fields.js';
export { type SlidingCounterRule, slidingCounterSchema } from './sliding-window-counter/rule.js';
export { MAX_LOG_LIMIT, type SlidingLogRule, slidingLogSchema } from './sliding-window-log/rule.js';
export { type TokenBucketRule, tokenBucketSchema } from './token-bucket/rule.js';

/** The policies whose windows may follow the calendar (their entry's `calendarWindows`); the others refuse `calendar` by name. */
const CALENDAR_POLICIES: readonly PolicyName[] = POLICIES.filter((policy) => POLICY_REGISTRY[policy].calendarWindows);

/** Any rule: the policies' schemas told apart by `policy` (the admin API's OpenAPI document shows it). */
export const ruleSchema = lazily(() => {
  const { z } = loadPackage<{ z: typeof Zod }>('zod');
  const options = POLICIES.map((policy) => POLICY_REGISTRY[policy].schema) as unknown as Parameters<typeof z.discriminatedUnion>[1];
  return z.discriminatedUnion('policy', options) as unknown as Zod.ZodType<Rule>;
});

/** Turns the first zod issue into a SluiceError whose field is the dotted path under `prefix`. */
export function zodToSluiceError(error: Zod.ZodError, prefix: string, code: 'ERR_RULE_INVALID' | 'ERR_CONFIG_INVALID' | 'ERR_BAD_REQUEST' = 'ERR_RULE_INVALID'): SluiceError {
  const issue = error.issues[0];
  const path = issue ? issue.path.map(String) : [];
  const field = [prefix, ...path].filter((part) => part !== '').join('.');
  let message = issue?.message ?? 'is invalid';
  if (issue?.code === 'invalid_union' && path.length === 0) message = `unknown policy; expected one of ${POLICIES.join(', ')}`;
  if (issue?.code === 'unrecognized_keys') message = `unknown field(s) ${issue.keys.join(', ')}`;
  return new SluiceError(code, message, field || undefined);
}

/** Validates and returns a rule; throws SluiceError naming the offending field. */
export function parseRule(input: unknown, field = 'rule'): Rule {
  if (input === null || typeof input !== 'object') throw new SluiceError('ERR_RULE_INVALID', 'must be an object', field);
  const policy = (input as { policy?: unknown }).policy;
  if (!isPolicyName(policy)) {
    throw new SluiceError('ERR_RULE_INVALID', `unknown policy ${JSON.stringify(policy)}; expected one of ${POLICIES.join(', ')}`, `${field}.policy`);
  }
  if ('calendar' in input && !CALENDAR_POLICIES.includes(policy)) {
    throw new SluiceError('ERR_RULE_INVALID', `calendar windows apply to ${CALENDAR_POLICIES.join(', ')} only, not ${policy}`, `${field}.calendar`);
  }
  const result = POLICY_REGISTRY[policy].schema.safeParse(input);
  if (!result.success) throw zodToSluiceError(result.error, field);
  checkedRules.add(result.data);
  return result.data;
}

/** Rule objects already through parseRule (its results, and inputs checkRule accepted). */
const checkedRules = new WeakSet<object>();

/**
 * Throws, as parseRule does, when `rule` is not a valid rule; each object is
 * checked once. The engines call it on every rule they are handed, so a rule
 * from any door (an adapter's resolve, a direct Engine.decide) is validated.
 * The schema has no defaults or transforms, so a valid input is used as is.
 */
export function checkRule(rule: Rule, field = 'rule'): Rule {
  if (rule === null || typeof rule !== 'object' || !checkedRules.has(rule)) {
    parseRule(rule, field);
    checkedRules.add(rule);
  }
  return rule;
}

/** The most units one call can ever be granted (the policy's `capacity`): a larger cost could never be allowed. */
export function capacityOf(rule: Rule): number {
  return policyOf(rule).capacity(rule);
}

/** Throws when `cost` is not a positive integer the rule could ever grant. */
export function assertValidCost(rule: Rule, cost: number): void {
  if (!Number.isInteger(cost) || cost < 1) throw new SluiceError('ERR_COST_INVALID', 'must be a positive integer', 'cost');
  const capacity = capacityOf(rule);
  if (cost > capacity) throw new SluiceError('ERR_COST_INVALID', `${cost} exceeds the rule's capacity of ${capacity}: it could never be allowed`, 'cost');
}

/** JSON with sorted keys at every depth: equal values give equal text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A stable identity of a rule's parameters, nested options included: caches keyed by it see a changed limit at once. */
export function ruleFingerprint(rule: Rule): string {
  return stableJson(rule);
}
