// Batch leasing for hot keys (one key too busy for one Redis slot): one script call takes a whole
// `batch` of units, this instance spends them locally (source `cache`).
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
import type { Decision } from '../core/decision.js';
import { capacityOf } from '../core/rule.js';
import type { Clock } from '../stores/clock.js';
import { type LeaseReply, runLease } from '../stores/redis/lease.js';
import type { RedisClient } from '../stores/redis/scripts.js';
import { BoundedLru } from './lru.js';
import { leaseCalls } from './metrics.js';
import type { NegativeCache } from './negative-cache.js';
import type { Plan } from './plan.js';

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

export interface LeaserDeps {
  client: RedisClient;
  /** Runs a Redis call under the deadline and breaker. */
  guarded<T>(plan: Plan, units: number, call: () => Promise<T>): Promise<T>;
  negative: NegativeCache;
  /** Called with every lease reply (the fallback remembers when the bucket is full again). */
  onReply(plan: Plan, reply: LeaseReply): void;
  /** The decision when Redis cannot be asked. */
  degraded(plan: Plan, cost: number, error: unknown): Decision;
  leaseTtlMs: number;
  maxKeys: number;
  now: Clock;
  /** Live gateway instances, the ones racing for a batch. */
  instances(): number;
}

export class Leaser {
  private readonly pools: BoundedLru<string, Pool>;
  calls = 0;

  constructor(private readonly deps: LeaserDeps) {
    this.pools = new BoundedLru(deps.maxKeys);
  }

  async decide(plan: Plan, cost: number, batch: number): Promise<Decision> {
    const pool = this.poolFor(plan);
    for (;;) {
      if (pool.units >= cost) {
        pool.units -= cost;
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
      let initiator = false;
      if (pool.pending === undefined) {
        const refused = this.deps.negative.get(plan.key, plan.fingerprint, cost - pool.units, this.deps.now());
        if (refused) return refused;
        initiator = true;
        pool.pending = this.refill(plan, pool, cost - pool.units, Math.max(batch, cost - pool.units));
      }
      const outcome = await pool.pending;
      if (pool.units >= cost) continue;
      if (outcome.kind === 'refused') return initiator ? outcome.decision : { ...outcome.decision, source: 'cache' };
      if (outcome.kind === 'down') return this.deps.degraded(plan, cost, outcome.error);
      // Granted, but other requests spent it first: lease again.
    }
  }

  /** Drops a key's unspent units (reset, or a key that cooled down). */
  forget(key: string): void {
    this.pools.delete(key);
  }

  has(key: string): boolean {
    return this.pools.peek(key) !== undefined;
  }

  private poolFor(plan: Plan): Pool {
    const now = this.deps.now();
    let pool = this.pools.get(plan.key);
    if (pool !== undefined && pool.pending === undefined && (pool.fingerprint !== plan.fingerprint || pool.expiresAt <= now)) pool = undefined;
    if (pool === undefined) {
      pool = { fingerprint: plan.fingerprint, units: 0, expiresAt: now + this.deps.leaseTtlMs, redisRemaining: 0, resetAfterMs: 0, pending: undefined };
      this.pools.set(plan.key, pool);
    }
    return pool;
  }

  private async refill(plan: Plan, pool: Pool, need: number, want: number): Promise<Outcome> {
    try {
      this.calls++;
      const reply = await this.deps.guarded(plan, want, () => runLease(this.deps.client, plan.key, plan.rule, need, want));
      this.deps.onReply(plan, reply);
      const now = this.deps.now();
      if (reply.granted === 0) {
        leaseCalls.inc({ outcome: 'refused' });
        const spread = 1 + Math.random() * (Math.max(1, this.deps.instances()) - 1);
        const decision: Decision = {
          allowed: false,
          remaining: reply.remaining,
          limit: capacityOf(plan.rule),
          resetAfterMs: reply.resetAfterMs,
          retryAfterMs: Math.ceil(reply.retryAfterMs * spread),
          delayMs: 0,
          source: 'redis',
        };
        this.deps.negative.add(plan.key, plan.fingerprint, need, decision, now);
        return { kind: 'refused', decision };
      }
      leaseCalls.inc({ outcome: 'granted' });
      pool.units += reply.granted;
      pool.redisRemaining = reply.remaining;
      pool.resetAfterMs = reply.resetAfterMs;
      pool.expiresAt = now + this.deps.leaseTtlMs;
      return { kind: 'granted' };
    } catch (error) {
      return { kind: 'down', error };
    } finally {
      pool.pending = undefined;
    }
  }
}
