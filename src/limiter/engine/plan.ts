// Where one decision goes: which Redis key, under which (scaled) rule, and which
// local key the fallback uses. Scaling order: the region's share of the limit
// first (each region enforces its own part), then one shard's part of that
// (a sharded rule spreads its limit over N sub-buckets).
import { randomInt } from 'node:crypto';
import type { Decision } from '../../core/decision.js';
import { type BucketKey, bucketKey, shardKey } from '../../core/ids.js';
import { capacityOf, type Rule, ruleFingerprint } from '../../core/rule.js';
import type { PenaltyConfig } from '../../policies/penalty/model.js';
import { scaleRule } from './scale-rule.js';

/**
 * One limit planned (steps/compose.ts Call carries it with its cost): what a
 * request's limit (LimitCall) adds on its way down is the bucket's key built
 * once, the rule scaled to this region and shard, and the keys the local
 * caches use. The store sees its StoreCall (bucket, scaled rule, cost, shadow).
 */
export interface Plan {
  /** The rule as the caller gave it (onStoreDown, lease, shadow are read here). */
  readonly original: Rule;
  /** Where the store keeps it: the bucket, or one random shard of it. */
  readonly bucket: BucketKey;
  /** The rule enforced on that key. */
  readonly rule: Rule;
  /** Fingerprint of `rule`: local caches keyed by it see a changed limit at once. */
  readonly fingerprint: string;
  /** The whole (unsharded) bucket: the fallback limiter's and hot-key detector's key. */
  readonly baseKey: string;
  /** This region's part of the limit, before sharding; divided by the instances for the fallback. */
  readonly regionalRule: Rule;
  /** The limit's penalty box: the store decides the two in one call (Store.consumePenalized); absent = none. */
  readonly penalty?: PenaltyConfig;
}

const fingerprints = new WeakMap<Rule, string>();

export function fingerprintOf(rule: Rule): string {
  let fingerprint = fingerprints.get(rule);
  if (fingerprint === undefined) {
    fingerprint = ruleFingerprint(rule);
    fingerprints.set(rule, fingerprint);
  }
  return fingerprint;
}

/** Plans a decision; `shard` picks a sub-bucket (random by default). */
export function planFor(tenant: string, route: string, rule: Rule, regionShare: number, shard?: number): Plan {
  const base = bucketKey(tenant, route);
  const regionalRule = scaleRule(rule, regionShare);
  if (rule.shards === undefined) {
    return { original: rule, bucket: base, rule: regionalRule, fingerprint: fingerprintOf(regionalRule), baseKey: base.key, regionalRule };
  }
  const shardRule = scaleRule(regionalRule, 1 / rule.shards);
  const bucket = shardKey(tenant, route, shard ?? randomInt(rule.shards));
  return { original: rule, bucket, rule: shardRule, fingerprint: fingerprintOf(shardRule), baseKey: base.key, regionalRule };
}

/** Every bucket a rule's limit may live in (all shards of a sharded rule). */
export function bucketsOf(tenant: string, route: string, rule: Rule): BucketKey[] {
  if (rule.shards === undefined) return [bucketKey(tenant, route)];
  return Array.from({ length: rule.shards }, (_, i) => shardKey(tenant, route, i));
}

/** The decision when the store is down and the rule says `open` (allow) or `closed` (refuse: the gateway answers 503). */
export function storeDownDecision(mode: 'open' | 'closed', rule: Rule, retryAfterMs: number): Decision {
  const limit = capacityOf(rule);
  if (mode === 'open') return { allowed: true, remaining: limit, limit, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'open' };
  return { allowed: false, remaining: 0, limit, resetAfterMs: retryAfterMs, retryAfterMs, delayMs: 0, source: 'closed' };
}

const unshardedTwins = new WeakMap<Rule, Rule>();

/** The rule without `shards` (kept per rule object, so the plan cache keeps its plans): a penalized limit's, and the plain engine's. */
export function unsharded(rule: Rule): Rule {
  if (rule.shards === undefined) return rule;
  let twin = unshardedTwins.get(rule);
  if (twin === undefined) {
    const { shards: _, ...rest } = rule;
    twin = rest as Rule;
    unshardedTwins.set(rule, twin);
  }
  return twin;
}
