// The leasing part of the decision chain, first in it. A rule with `lease`, or
// a hot key (one key too busy for one Redis slot, HotKeyDetector below), leases: one
// store call takes a whole `batch` of units, this instance spends them locally
// (source `cache`). Other keys, and requests of several limits or with a
// penalty box, go on down the chain.
// Concurrent requests on a key share one lease call in flight. A refused lease
// holds this instance's requests until the batch is free, stretched by a random
// factor up to the number of instances: they would all wake at that instant
// and race for one batch, each race a Redis call. Units wait in Redis
// meanwhile, so nothing is lost while the bucket is below its capacity.
//
// Over-admission bound: an instance holds at most `batch` + cost − 1 leased
// units it has not spent, so over any interval the cluster admits at most what
// the exact limiter would admit plus instances × batch (for cost 1). Unspent
// units expire after `leaseTtlMs` (lost, never over-admitted).
//
// Spots hot keys from this instance's own traffic: a key seen more than
// `ratePerSec` times within one second switches to leasing, and back once a
// whole second passes below half that rate (hysteresis, so it does not flap).
import type { Decision } from '../../core/decision.js';
import { capacityOf } from '../../policies/rule.js';
import type { Clock } from '../../stores/clock.js';
import type { LeaseReply } from '../../stores/store.js';
import { BoundedLru } from '../../core/lru.js';
import type { Plan } from '../engine/plan.js';
import type { StoreDown } from '../fallback/fallback.js';
import type { InstanceCount } from '../fallback/instances.js';
import { leaseCalls } from '../../metrics/registry.js';
import type { ChainStats } from '../metrics/stats.js';
import { type Call, type Reply, replyOfOne, type Step } from './compose.js';
import type { NegativeCache } from './negative-cache.js';

interface Pool {
  fingerprint: string;
  /** Leased units not yet spent. */
  units: number;
  expiresAt: number;
  /** What the shared bucket had left at the last lease. */
  redisRemaining: number;
  resetAfterMs: number;
  pending: Promise<Outcome> | undefined;
}

type Outcome = { kind: 'granted' } | { kind: 'refused'; decision: Decision } | { kind: 'down'; error: unknown };

export interface LeasingOptions {
  /** Where leases go (through the breaker and deadline), and the decision when they cannot. */
  below: Pick<StoreDown, 'lease' | 'degraded'>;
  /** Whether a rule's policy can lease at all. */
  canLease(rule: Plan['rule']): boolean;
  negative: NegativeCache;
  hotKey: { autoLeaseRatePerSec: number; batch: number; leaseTtlMs: number };
  maxKeys: number;
  now: Clock;
  /** Live gateway instances, the ones racing for a batch. */
  instances: InstanceCount;
  stats: ChainStats;
}

export class LeasingStep {
  private readonly pools: BoundedLru<string, Pool>;
  private readonly hot: HotKeyDetector;

  constructor(private readonly options: LeasingOptions) {
    this.pools = new BoundedLru(options.maxKeys);
    this.hot = new HotKeyDetector(options.hotKey.autoLeaseRatePerSec, options.maxKeys);
  }

  /**
   * The step: a request with one limit that leases is decided here; any other
   * (several limits, a penalty box, a key that does not lease) goes on down.
   */
  readonly step: Step = (next) => (calls) => {
    if (calls.length !== 1 || calls[0]!.plan.penalty !== undefined) return next(calls);
    const call = calls[0]!;
    const batch = this.batchOf(call.plan);
    if (batch > 0) return this.spend(call, batch);
    if (this.has(call.plan.bucket.key)) this.forget(call.plan.bucket.key); // cooled down: unspent units are dropped, never over-admitted
    return next(calls);
  };

  /** Drops a key's unspent units (reset, or a key that cooled down). */
  forget(key: string): void {
    this.pools.delete(key);
  }

  has(key: string): boolean {
    return this.pools.peek(key) !== undefined;
  }

  /** Units per lease for this request: the rule's own batch, the automatic one for a hot key, or 0 (no leasing). */
  private batchOf(plan: Plan): number {
    if (!this.options.canLease(plan.rule)) return 0;
    if (plan.original.lease) return plan.original.lease.batch;
    // Automatic leasing off: no key is counted, and the clock is not read.
    if (!this.hot.counting || !this.hot.observe(plan.baseKey, this.options.now())) return 0;
    // Never lease more than this instance's share of the bucket, so one instance cannot hog a small limit.
    return Math.min(this.options.hotKey.batch, Math.max(1, Math.floor(capacityOf(plan.rule) / this.options.instances.value)));
  }

  private async spend(call: Call, batch: number): Promise<Reply> {
    const { plan, cost } = call;
    const pool = this.poolFor(plan);
    for (;;) {
      if (pool.units >= cost) {
        pool.units -= cost;
        return replyOfOne(call, this.fromPool(plan, pool));
      }
      let initiator = false;
      if (pool.pending === undefined) {
        const refused = this.options.negative.get(plan.bucket.key, plan.fingerprint, cost - pool.units, this.options.now());
        if (refused) return replyOfOne(call, refused);
        initiator = true;
        pool.pending = this.refill(plan, pool, cost - pool.units, Math.max(batch, cost - pool.units));
      }
      const outcome = await pool.pending;
      if (pool.units >= cost) continue;
      if (outcome.kind === 'refused') return replyOfOne(call, initiator ? outcome.decision : { ...outcome.decision, source: 'cache' });
      if (outcome.kind === 'down') return replyOfOne(call, this.options.below.degraded(plan, cost, outcome.error));
      // Granted, but other requests spent it first: lease again.
    }
  }

  private fromPool(plan: Plan, pool: Pool): Decision {
    return {
      allowed: true,
      remaining: pool.redisRemaining + pool.units,
      limit: capacityOf(plan.rule),
      resetAfterMs: pool.resetAfterMs,
      retryAfterMs: 0,
      delayMs: 0,
      source: 'cache',
    };
  }

  private poolFor(plan: Plan): Pool {
    const now = this.options.now();
    let pool = this.pools.get(plan.bucket.key);
    if (pool !== undefined && pool.pending === undefined && (pool.fingerprint !== plan.fingerprint || pool.expiresAt <= now)) pool = undefined;
    if (pool === undefined) {
      pool = { fingerprint: plan.fingerprint, units: 0, expiresAt: now + this.options.hotKey.leaseTtlMs, redisRemaining: 0, resetAfterMs: 0, pending: undefined };
      this.pools.set(plan.bucket.key, pool);
    }
    return pool;
  }

  private async refill(plan: Plan, pool: Pool, need: number, want: number): Promise<Outcome> {
    try {
      this.options.stats.leaseCalls++;
      const reply = await this.options.below.lease(plan, need, want);
      if (reply.granted === 0) return { kind: 'refused', decision: this.refused(plan, need, reply) };
      leaseCalls.inc({ outcome: 'granted' });
      pool.units += reply.granted;
      pool.redisRemaining = reply.remaining;
      pool.resetAfterMs = reply.resetAfterMs;
      pool.expiresAt = this.options.now() + this.options.hotKey.leaseTtlMs;
      return { kind: 'granted' };
    } catch (error) {
      return { kind: 'down', error };
    } finally {
      pool.pending = undefined;
    }
  }

  /** A refused lease: this instance's requests wait until the batch is free, spread so instances do not race at once. */
  private refused(plan: Plan, need: number, reply: LeaseReply): Decision {
    leaseCalls.inc({ outcome: 'refused' });
    const spread = 1 + Math.random() * (Math.max(1, this.options.instances.value) - 1);
    const decision: Decision = {
      allowed: false,
      remaining: reply.remaining,
      limit: capacityOf(plan.rule),
      resetAfterMs: reply.resetAfterMs,
      retryAfterMs: Math.ceil(reply.retryAfterMs * spread),
      delayMs: 0,
      source: 'redis',
    };
    this.options.negative.add(plan.bucket.key, plan.fingerprint, need, decision, this.options.now());
    return decision;
  }
}

interface Counter {
  /** Start of the current one-second window (ms). */
  windowStart: number;
  count: number;
  hot: boolean;
}

const WINDOW_MS = 1000;

export class HotKeyDetector {
  private readonly counters: BoundedLru<string, Counter>;

  constructor(
    private readonly ratePerSec: number,
    maxKeys: number,
  ) {
    this.counters = new BoundedLru(maxKeys);
  }

  /** Whether keys are counted at all: a rate of 0 turns automatic leasing off. */
  get counting(): boolean {
    return this.ratePerSec > 0;
  }

  /** Counts one request on `key` at `now` and says whether the key is hot. */
  observe(key: string, now: number): boolean {
    if (!this.counting) return false;
    let counter = this.counters.get(key);
    if (counter === undefined) {
      counter = { windowStart: now, count: 0, hot: false };
      this.counters.set(key, counter);
    }
    if (now - counter.windowStart >= WINDOW_MS) {
      // A window ended: cool down when it ran below half the threshold, or when whole windows passed idle.
      const idle = now - counter.windowStart >= 2 * WINDOW_MS;
      if (counter.hot && (idle || counter.count < this.ratePerSec / 2)) counter.hot = false;
      counter.windowStart = idle ? now : counter.windowStart + WINDOW_MS;
      counter.count = 0;
    }
    counter.count++;
    if (counter.count > this.ratePerSec) counter.hot = true;
    return counter.hot;
  }
}
