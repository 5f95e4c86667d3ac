// Reconciles a Redis reply that came after the deadline with what the local
// fallback decided meanwhile. The script did run, so its reply tells what
// Redis counted; the bucket is then corrected to count exactly what the client
// was told:
//   fallback admitted, Redis refused  → an over-admission: the units are
//     charged to the bucket (a debt past empty if need be), so later requests pay;
//   fallback refused, Redis admitted  → a false refusal: Redis took units for
//     a request that was refused, they are given back;
//   both the same                     → nothing to do.
// Policies without an adjust (the window policies) stay uncorrected.
import type { Logger } from 'pino';
import type { Decision } from '../core/decision.js';
import type { Rule } from '../core/rule.js';
import { canAdjust, runAdjust } from '../stores/redis/adjust.js';
import type { RedisClient } from '../stores/redis/scripts.js';
import { lateReplies } from './metrics.js';
import { withTimeout } from './timeout.js';

export type LateOutcome = 'agreed' | 'refunded' | 'charged' | 'uncorrected' | 'lost';

export interface LateRepliesOptions {
  client: RedisClient;
  /** Deadline of one correction (not on any request's path). */
  timeoutMs: number;
  logger: Logger;
  /** Called with every late Redis decision (e.g. to remember the bucket's state). */
  onReply: (key: string, rule: Rule, redis: Decision) => void;
}

export class LateReplies {
  readonly counts: Record<LateOutcome, number> = { agreed: 0, refunded: 0, charged: 0, uncorrected: 0, lost: 0 };

  constructor(private readonly options: LateRepliesOptions) {}

  /** Watches the late reply of a call whose request got `local` from the fallback. */
  watch(baseKey: string, key: string, rule: Rule, cost: number, local: Decision, reply: Promise<Decision>): void {
    reply.then(
      (redis) => {
        this.options.onReply(baseKey, rule, redis);
        void this.reconcile(key, rule, cost, local.allowed, redis.allowed);
      },
      () => this.count('lost'),
    );
  }

  /** Takes `delta` units from the bucket whatever the limit; false when the policy or Redis cannot. */
  async adjust(key: string, rule: Rule, delta: number): Promise<boolean> {
    if (!canAdjust(rule)) return false;
    try {
      await withTimeout(runAdjust(this.options.client, key, rule, delta), this.options.timeoutMs);
      return true;
    } catch (error) {
      this.options.logger.debug({ err: error, key }, 'could not adjust a bucket');
      return false;
    }
  }

  private async reconcile(key: string, rule: Rule, cost: number, localAllowed: boolean, redisAllowed: boolean): Promise<void> {
    if (localAllowed === redisAllowed) return this.count('agreed');
    const delta = localAllowed ? cost : -cost;
    const done = await this.adjust(key, rule, delta);
    this.count(!done ? 'uncorrected' : localAllowed ? 'charged' : 'refunded');
  }

  private count(outcome: LateOutcome): void {
    this.counts[outcome]++;
    lateReplies.inc({ outcome });
  }
}
