// Leasing (hot keys, design 7.2): one call takes up to `want` units of a bucket
// so an instance can spend them locally. It runs the policy's own script (no
// second Lua program to keep in step with the model): ask for `want`; when
// refused, the reply says how many units are left, so ask for those (at least
// `need`) once more. Near exhaustion a lease therefore costs two round trips,
// and a refusal for fewer than `need` units a third, whose reply carries the
// exact retry time for `need`.
import type { Rule } from '../../core/rule.js';
import { runScript } from './scripts.js';
import type { RedisClient } from './scripts.js';

/** Shaping delays requests instead of admitting them in advance: it cannot lease. */
export function isLeasable(rule: Rule): boolean {
  return rule.policy !== 'leaky_bucket';
}

export interface LeaseReply {
  /** Units taken (0 when refused: fewer than `need` were available). */
  granted: number;
  /** Units left in the shared bucket after the lease. */
  remaining: number;
  resetAfterMs: number;
  /** When refused: milliseconds until `need` units are available. */
  retryAfterMs: number;
  state: string;
}

/** Takes between `need` and `want` units of `key`, or none. */
export async function runLease(client: RedisClient, key: string, rule: Rule, need: number, want: number): Promise<LeaseReply> {
  if (!isLeasable(rule)) throw new Error(`policy ${rule.policy} cannot lease`);
  let ask = Math.max(need, want);
  for (let attempt = 0; ; attempt++) {
    const { decision, state } = await runScript(client, key, rule, ask);
    if (decision.allowed) return { granted: ask, remaining: decision.remaining, resetAfterMs: decision.resetAfterMs, retryAfterMs: 0, state };
    const refused = { granted: 0, remaining: decision.remaining, resetAfterMs: decision.resetAfterMs, retryAfterMs: decision.retryAfterMs, state };
    if (ask === need || attempt === 2) return refused;
    // Fewer units than asked: take what is left, or ask for `need` alone to learn its exact retry time.
    ask = decision.remaining >= need && decision.remaining < ask ? decision.remaining : need;
  }
}
