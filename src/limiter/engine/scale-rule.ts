// Scaling a rule's limit by a factor: a region's share, one shard's part, one
// instance's part of the fallback. Never below one unit, so a scaled rule can
// always admit something.
import type { Rule } from '../../core/rule.js';
import { policyOf } from '../../policies/index.js';

const memo = new WeakMap<Rule, Map<number, Rule>>();

/** `rule` with its capacity/limit and rate multiplied by `factor` (0 < factor ≤ 1). */
export function scaleRule(rule: Rule, factor: number): Rule {
  if (factor === 1) return rule;
  let byFactor = memo.get(rule);
  if (byFactor === undefined) {
    byFactor = new Map();
    memo.set(rule, byFactor);
  }
  let scaled = byFactor.get(factor);
  if (scaled === undefined) {
    scaled = policyOf(rule).model.scale(rule, factor) as Rule;
    if (byFactor.size > 64) byFactor.clear(); // factors follow instance counts and shares: few, but bounded anyway
    byFactor.set(factor, scaled);
  }
  return scaled;
}


/**
 * The ms one unit moves the state of a policy carried as a time into the
 * fallback (the registry's `carry`: token bucket, GCRA, leaky bucket);
 * undefined for a window policy.
 */
export function unitMsOf(rule: Rule): number | undefined {
  const entry = policyOf(rule);
  return entry.carry === 'time' ? entry.model.unitMs?.(rule) : undefined;
}

/**
 * The local state equivalent to what Redis last reported, for seeding the
 * fallback bucket: a bucket full again `resetAfterMs` from now. Scaling
 * capacity and rate by the same factor leaves that time unchanged, so the
 * local bucket holds 1/N of what Redis had. The time is rebuilt on the local
 * clock, so a skew between the gateway's and Redis's clocks does not matter.
 * Window policies: undefined.
 */
export function seedState(rule: Rule, localAtMs: number, resetAfterMs: number): unknown {
  return policyOf(rule).model.fromReset?.(localAtMs, resetAfterMs, rule);
}
