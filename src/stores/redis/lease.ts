// Leasing, for hot keys that one Redis slot could not serve alone: one call takes a whole batch of units so an
// instance can spend them locally. It runs the policy's own script (no second
// Lua program to keep in step with the model), asking for the batch: when
// fewer units are left, the lease is refused with the exact time until the
// batch is free, and the leaser's negative cache holds further requests until
// then. So a lease is always one round trip, even when the limit is exhausted
// (taking the dribble of units left would cost a call every few units), and
// the price is that up to batch − 1 units may wait in Redis for a batch.
import type { BucketKey } from '../../core/ids.js';
import { capacityOf, type Rule } from '../../core/rule.js';
import { runDecision } from './scripts.js';
import type { RedisClient } from './scripts.js';
import type { LeaseReply } from '../store.js';

/** Shaping delays requests instead of admitting them in advance: it cannot lease. */
export function isLeasable(rule: Rule): boolean {
  return rule.policy !== 'leaky_bucket';
}

export type { LeaseReply } from '../store.js';

/** Takes max(`need`, `want`) units of `bucket` (at most the rule's capacity) in one call, or none. */
export async function runLease(client: RedisClient, bucket: BucketKey, rule: Rule, need: number, want: number): Promise<LeaseReply> {
  if (!isLeasable(rule)) throw new Error(`policy ${rule.policy} cannot lease`);
  const ask = Math.min(Math.max(need, want), capacityOf(rule));
  const decision = await runDecision(client, bucket, rule, ask);
  return { granted: decision.allowed ? ask : 0, remaining: decision.remaining, resetAfterMs: decision.resetAfterMs, retryAfterMs: decision.retryAfterMs };
}
