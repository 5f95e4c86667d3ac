// Where one decision goes: which Redis key, under which (scaled) rule, and which
// local key the fallback uses. Scaling order: the region's share of the limit
// first (each region enforces its own part), then one shard's part of that
// (a sharded rule spreads its limit over N sub-buckets).
//
// PlanCache, below: plans of unsharded rules, kept per bucket (tag and name). The gateway asks for the
// same (bucket, rule) on every request, and its plan (two key strings,
// two id checks, the region-scaled rule, its fingerprint) comes out the same
// each time, a visible share of a proxied request's CPU at saturation (--cpu-prof).
// A kept plan is used only for the same rule object at the same region share,
// so a reload (new rule objects) or a moved share plans anew. Plans are shared
// between decisions: nothing downstream writes to one (Plan's fields are readonly).
//
// scaleRule, below: scaling a rule's limit by a factor: a region's share, one shard's part, one
// instance's part of the fallback. Never below one unit, so a scaled rule can
// always admit something.
import { randomInt } from 'node:crypto';
import type { Decision } from '../../core/decision.js';
import { type Bucket, type BucketKey, keyOfBucket, shardKey } from '../../core/ids.js';
import { capacityOf, type Rule, ruleFingerprint } from '../../policies/rule.js';
import { policyOf } from '../../policies/index.js';
import type { PenaltyConfig } from '../../policies/penalty/model.js';

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

/** Plans a decision; `shard` picks a sub-bucket (random by default). A BucketKey handed in is the plan's bucket as is. */
export function planFor(bucket: Bucket, rule: Rule, regionShare: number, shard?: number): Plan {
  const base = keyOfBucket(bucket);
  const regionalRule = scaleRule(rule, regionShare);
  if (rule.shards === undefined) {
    return { original: rule, bucket: base, rule: regionalRule, fingerprint: fingerprintOf(regionalRule), baseKey: base.key, regionalRule };
  }
  const shardRule = scaleRule(regionalRule, 1 / rule.shards);
  const sub = shardKey(base.tag, base.name, shard ?? randomInt(rule.shards));
  return { original: rule, bucket: sub, rule: shardRule, fingerprint: fingerprintOf(shardRule), baseKey: base.key, regionalRule };
}

/** Every bucket a rule's limit may live in (all shards of a sharded rule). */
export function bucketsOf(bucket: Bucket, rule: Rule): BucketKey[] {
  if (rule.shards === undefined) return [keyOfBucket(bucket)];
  return Array.from({ length: rule.shards }, (_, i) => shardKey(bucket.tag, bucket.name, i));
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

/** Plans kept in all; past it the cache starts over, so a flood of derived ids (one per client address) cannot grow it. */
export const MAX_PLANS = 10_000;

export class PlanCache {
  /** name → tag → plan: names are few, and two lookups spare a joined key per call. */
  private readonly byName = new Map<string, Map<string, Plan>>();
  private size = 0;

  plan(bucket: Bucket, rule: Rule, regionShare: number): Plan {
    if (rule.shards !== undefined) return planFor(bucket, rule, regionShare); // a random shard per call
    const { tag, name } = bucket;
    let byTag = this.byName.get(name);
    const kept = byTag?.get(tag);
    if (kept !== undefined && kept.original === rule && kept.regionalRule === scaleRule(rule, regionShare)) return kept;
    const plan = planFor(bucket, rule, regionShare);
    if (this.size >= MAX_PLANS) {
      this.byName.clear();
      this.size = 0;
      byTag = undefined;
    }
    if (byTag === undefined) {
      byTag = new Map();
      this.byName.set(name, byTag);
    }
    if (!byTag.has(tag)) this.size++;
    byTag.set(tag, plan);
    return plan;
  }

  get plans(): number {
    return this.size;
  }
}

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
