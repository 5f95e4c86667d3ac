// Reconciles a Redis reply that came after the deadline with what the local
// fallback decided meanwhile. The script did run, so its reply tells what
// Redis counted; the bucket is then corrected to count exactly what the client
// was told:
//   fallback admitted, Redis refused  → an over-admission: the units are
//     charged to the bucket (a debt past empty if need be), so later requests pay;
//   fallback refused, Redis admitted  → a false refusal: Redis took units for
//     a request that was refused, they are given back;
//   both the same                     → nothing to do;
//   both admitted, told another delay → a shaped request's place in the queue
//     lost (or invented): counted as a disagreement, `delay_mismatch`; the
//     units are the same, there is nothing to correct.
// Policies without an adjust (the window policies) stay uncorrected.
import type { Logger } from 'pino';
import type { Decision } from '../../core/decision.js';
import type { BucketKey } from '../../core/ids.js';
import type { Rule } from '../../policies/rule.js';
import { withTimeout } from '../../core/timeout.js';
import type { Clock } from '../../stores/clock.js';
import type { GroupReply, SharedStore, StoreCall } from '../../stores/store.js';
import { unitMsOf } from '../engine/plan.js';
import { lateReplies } from '../../metrics/registry.js';
import type { ChainStats, LateOutcome } from '../metrics/stats.js';
import type { RedisWord } from './last-states.js';

export type { LateOutcome } from '../metrics/stats.js';

export interface LateRepliesOptions {
  store: SharedStore;
  /** Deadline of one correction (not on any request's path). */
  timeoutMs: number;
  logger: Logger;
  /** Remembers the bucket's state from every late Redis decision. */
  fallback: { remember(key: string, bucket: string, redisRule: Rule, word: RedisWord, taken: number): number };
  /** Where the outcomes are counted. */
  counts: Record<LateOutcome, number>;
  /** Where the units restored after a failover are counted. */
  stats: Pick<ChainStats, 'noteRestored'>;
  now: Clock;
}

/** The limit a late call was on: its bucket (and the whole, unsharded one's key), rule and cost. */
export interface LateLimit {
  baseKey: string;
  bucket: BucketKey;
  rule: Rule;
  cost: number;
}

/** A multi-limit call past its deadline, as the request was told: each call's base key, whether it was charged, how long it was held, and when it was sent. */
export interface LateGroup {
  readonly baseKeys: readonly string[];
  readonly calls: readonly StoreCall[];
  readonly charged: readonly boolean[];
  readonly delays?: readonly number[];
  readonly sentAt?: number | undefined;
}

export class LateReplies {
  constructor(private readonly options: LateRepliesOptions) {}

  /** Watches the late reply of a call on `limit` sent at `sentAt` whose request got `local` from the fallback (just now). */
  watch(limit: LateLimit, local: Decision, reply: Promise<Decision>, sentAt?: number): void {
    const { baseKey, bucket, rule, cost } = limit;
    const localAt = this.options.now();
    reply.then(
      (redis) => {
        this.restore(bucket, rule, this.options.fallback.remember(baseKey, bucket.key, rule, redis, redis.allowed ? cost : 0));
        const heldApart = local.allowed && redis.allowed && !sameRelease(rule, { ms: local.delayMs, at: localAt }, { ms: redis.delayMs, sentAt: sentAt ?? localAt, repliedAt: this.options.now() });
        if (heldApart) this.count('delay_mismatch');
        else void this.reconcile(bucket, rule, cost, local.allowed, redis.allowed);
      },
      () => this.count('lost'),
    );
  }

  /**
   * Watches the late reply of a multi-limit call: each bucket is corrected to
   * what the request was finally told, charged (`charged[i]`) or not, and held
   * (`delays[i]`, ms) or not.
   */
  watchAll(reply: Promise<GroupReply>, told: LateGroup): void {
    const { baseKeys, calls, charged, delays = [], sentAt } = told;
    const localAt = this.options.now();
    reply.then(
      (redis) => {
        calls.forEach((call, i) => {
          const decision = redis.decisions[i]!;
          const admitted = redis.admitted && decision.allowed;
          this.restore(call.bucket, call.rule, this.options.fallback.remember(baseKeys[i]!, call.bucket.key, call.rule, decision, admitted ? call.cost : 0));
          const heldApart = charged[i]! && admitted && !sameRelease(call.rule, { ms: delays[i] ?? 0, at: localAt }, { ms: decision.delayMs, sentAt: sentAt ?? localAt, repliedAt: this.options.now() });
          if (heldApart) this.count('delay_mismatch');
          else void this.reconcile(call.bucket, call.rule, call.cost, charged[i]!, admitted);
        });
      },
      () => this.count('lost'),
    );
  }

  /**
   * Charges back `units` a bucket came back without from a breaker episode
   * (what a failed master acknowledged and never replicated: last-states.ts),
   * past empty if need be, like an over-admission. Nothing for 0.
   */
  restore(bucket: BucketKey, rule: Rule, units: number): void {
    if (units <= 0) return;
    void this.adjust(bucket, rule, units).then((done) => done && this.options.stats.noteRestored(units));
  }

  /** Takes `delta` units from the bucket whatever the limit; false when the policy or Redis cannot. */
  async adjust(bucket: BucketKey, rule: Rule, delta: number): Promise<boolean> {
    if (!this.options.store.canAdjust(rule)) return false;
    try {
      await withTimeout(this.options.store.adjust(bucket, rule, delta), this.options.timeoutMs);
      return true;
    } catch (error) {
      this.options.logger.debug({ err: error, key: bucket.key }, 'could not adjust a bucket');
      return false;
    }
  }

  private async reconcile(bucket: BucketKey, rule: Rule, cost: number, localAllowed: boolean, redisAllowed: boolean): Promise<void> {
    if (localAllowed === redisAllowed) return this.count('agreed');
    const delta = localAllowed ? cost : -cost;
    const done = await this.adjust(bucket, rule, delta);
    this.count(!done ? 'uncorrected' : localAllowed ? 'charged' : 'refunded');
  }

  private count(outcome: LateOutcome): void {
    this.options.counts[outcome]++;
    lateReplies.inc({ outcome });
  }
}

/**
 * Whether a request told at `localAt` to wait `localMs` is released when
 * Redis's queue would release it: Redis ran the call at some time between
 * `sentAt` and `repliedAt` (unknown where: the reply was late) and said wait
 * `redisMs` from then. Within half a unit's leak time either way it is the same
 * place in the queue (the delays are rounded up to whole ms).
 */
function sameRelease(rule: Rule, local: { ms: number; at: number }, redis: { ms: number; sentAt: number; repliedAt: number }): boolean {
  const { ms: localMs, at: localAt } = local;
  const { ms: redisMs, sentAt, repliedAt } = redis;
  if (localMs === 0 && redisMs === 0) return true;
  const slackMs = Math.max(1, (unitMsOf(rule) ?? 0) / 2);
  const release = localAt + localMs;
  return release >= sentAt + redisMs - slackMs && release <= repliedAt + redisMs + slackMs;
}
