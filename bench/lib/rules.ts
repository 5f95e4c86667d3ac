// The rules the benches use, per policy: one that never refuses (throughput:
// every call does the full read-compute-write), one sized for accuracy runs
// (capacity 100, 100 per second), and one whose keys live long enough to be
// counted for memory.
import { type BucketKey, bucketKey } from '../../src/core/ids.js';
import { type PolicyName, parseRule, type Rule } from '../../src/policies/rule.js';
import { POLICY_REGISTRY } from '../../src/policies/index.js';

/** The policies whose model and Lua twin are registered right now. */
export function registeredPolicies(): PolicyName[] {
  return Object.keys(POLICY_REGISTRY) as PolicyName[];
}

export function throughputRule(policy: PolicyName): Rule {
  switch (policy) {
    case 'token_bucket':
    case 'gcra':
      return parseRule({ policy, capacity: 1_000_000, refillPerSecond: 1_000_000 });
    case 'fixed_window':
    case 'sliding_window_counter':
      return parseRule({ policy, limit: 1_000_000_000, windowMs: 1000 });
    case 'sliding_window_log':
      return parseRule({ policy, limit: 100_000, windowMs: 1000 });
    case 'leaky_bucket':
      return parseRule({ policy, ratePerSecond: 1_000_000, burst: 1_000_000, nodelay: true });
  }
}

/** Capacity 100 and 100 per second (or 100 per 1 s window): the limit the accuracy runs hold. */
export function accuracyRule(policy: PolicyName, perSecond = 100): Rule {
  switch (policy) {
    case 'token_bucket':
    case 'gcra':
      return parseRule({ policy, capacity: perSecond, refillPerSecond: perSecond });
    case 'fixed_window':
    case 'sliding_window_counter':
    case 'sliding_window_log':
      return parseRule({ policy, limit: perSecond, windowMs: 1000 });
    case 'leaky_bucket':
      return parseRule({ policy, ratePerSecond: perSecond, burst: perSecond, nodelay: true });
  }
}

/**
 * A realistic limit (burst 200, about 100 per second) whose state stays stored
 * while 100,000 buckets are written: a bucket's key expires once it is full
 * again, so the refill is slowed down to keep every key alive during the count.
 */
export function memoryRule(policy: PolicyName): Rule {
  switch (policy) {
    case 'token_bucket':
    case 'gcra':
      return parseRule({ policy, capacity: 200, refillPerSecond: 0.001 });
    case 'fixed_window':
    case 'sliding_window_counter':
    case 'sliding_window_log':
      return parseRule({ policy, limit: 200, windowMs: 3_600_000 });
    case 'leaky_bucket':
      return parseRule({ policy, ratePerSecond: 0.001, burst: 200, nodelay: true });
  }
}

/** Realistic bucket ids: `rl:{tenant-00042}:create-order`. */
export const ROUTES = ['create-order', 'list-orders', 'get-order'] as const;
export const tenantId = (i: number): string => `tenant-${String(i).padStart(5, '0')}`;

/** Bucket `i` of the memory count: tenants with 3 routes each, as in the target peak (100,000 tenants × 3 routes). */
export const memoryBucketKey = (i: number): BucketKey => bucketKey(tenantId(Math.floor(i / ROUTES.length)), ROUTES[i % ROUTES.length]!);
