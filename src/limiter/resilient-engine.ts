// The engine over Redis that keeps deciding when Redis is slow or gone, and
// spares Redis when one tenant's key is hot.
//
// Every Redis call runs under a deadline that measures Redis, not this
// process's event loop (deadline.ts), behind a circuit breaker (breaker.ts).
// A failed call becomes a decision by the rule's `onStoreDown`: the local
// fallback limiter with 1/N of the limit (default), `open` or `closed`. Around
// the calls: a negative cache of refused keys, batch leasing for hot keys, and
// membership (the N) with region shares (membership.ts).
import type { Logger } from 'pino';
import type { Decision, DecisionSource } from '../core/decision.js';
import { SluiceError } from '../core/errors.js';
import { assertValidCost, capacityOf, type Rule } from '../core/rule.js';
import { type Clock, systemClock } from '../stores/clock.js';
import { isLeasable } from '../stores/redis/lease.js';
import type { RedisClient } from '../stores/redis/scripts.js';
import { RedisStore } from '../stores/redis-store.js';
import type { BucketInfo } from '../stores/store.js';
import { type BreakerOptions, isOpenBreakerError, RedisBreaker } from './breaker.js';
import { ConnectionWatch } from './connection-watch.js';
import { isDeadlineError, withDeadline } from './deadline.js';
import { applyShadow, type Engine, type EngineHealth } from './engine.js';
import { type Debt, FallbackDebts } from './fallback-debts.js';
import { FallbackLimiter } from './fallback-limiter.js';
import { HotKeyDetector } from './hot-keys.js';
import { Leaser } from './leaser.js';
import { Membership } from './membership.js';
import type { RegionRebalancer } from './region-rebalancer.js';
import { degradedDecisions, fallbackChargedUnits, storeFailures } from './metrics.js';
import { NegativeCache } from './negative-cache.js';
import { keysOf, type Plan, planFor, storeDownDecision } from './plan.js';
import { isTimeBased, scaleRule } from './scale-rule.js';
import { withTimeout } from './timeout.js';

export interface ResilientEngineOptions {
  client: RedisClient;
  /** Close the client with the engine. */
  ownsClient: boolean;
  deadlineMs: number;
  /** How long calls on a fresh client wait for its first bytes before the deadline applies. */
  connectGraceMs: number;
  breaker: BreakerOptions;
  /** Fixed number of gateway instances; undefined = follow membership. */
  instances: number | undefined;
  instanceId: string;
  heartbeatMs: number;
  memberTtlMs: number;
  region: string | undefined;
  defaultRegionShare: number;
  hotKey: { autoLeaseRatePerSec: number; batch: number; leaseTtlMs: number };
  negativeCacheSize: number;
  stateCacheSize: number;
  fallbackMaxKeys: number;
  /** Deadline of reset and inspect (admin calls, not on the request path). */
  adminTimeoutMs: number;
  logger: Logger;
  /** Optional region-share rebalancer, started and stopped with the engine. */
  rebalancer?: RegionRebalancer;
  now?: Clock;
}

/** Counters for tests and benchmarks; the Prometheus series are in metrics.ts. */
export interface EngineStats {
  decisions: number;
  /** Calls that reached the Redis client (decisions, leases, peeks). */
  storeCalls: number;
  deadlineTimeouts: number;
  storeErrors: number;
  /** Calls refused by the open breaker without touching Redis. */
  breakerRejects: number;
  /** Units the fallback admitted while the breaker was open, charged to Redis after it closed. */
  chargedUnits: number;
  bySource: Partial<Record<DecisionSource, number>>;
}

/** Debts charged to Redis at once after an outage. */
const CHARGE_CONCURRENCY = 32;

export class ResilientEngine implements Engine {
  readonly stats: EngineStats = { decisions: 0, storeCalls: 0, deadlineTimeouts: 0, storeErrors: 0, breakerRejects: 0, chargedUnits: 0, bySource: {} };
  readonly store: RedisStore;
  readonly membership: Membership;
  private readonly breaker: RedisBreaker;
  private readonly watch: ConnectionWatch;
  private readonly fallback: FallbackLimiter;
  private readonly debts: FallbackDebts;
  private readonly negative: NegativeCache;
  private readonly hot: HotKeyDetector;
  private readonly leaser: Leaser;
  private readonly now: Clock;
  /** Units per bucket sent to Redis and not answered yet (only keys with calls outstanding). */
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly options: ResilientEngineOptions) {
    this.now = options.now ?? systemClock;
    this.store = new RedisStore(options.client);
    this.watch = new ConnectionWatch(options.client, options.connectGraceMs);
    this.breaker = new RedisBreaker(options.breaker, options.logger, () => {
      this.fallback.endEpisode();
      void this.chargeBack();
    });
    this.debts = new FallbackDebts(options.fallbackMaxKeys);
    this.fallback = new FallbackLimiter({
      maxKeys: options.fallbackMaxKeys,
      stateCacheSize: options.stateCacheSize,
      unknownRetryMs: options.breaker.resetTimeoutMs,
      now: this.now,
    });
    this.negative = new NegativeCache(options.negativeCacheSize);
    this.hot = new HotKeyDetector(options.hotKey.autoLeaseRatePerSec, options.stateCacheSize);
    this.leaser = new Leaser({
      client: options.client,
      guarded: (plan, units, call) => this.guarded(plan, units, call),
      negative: this.negative,
      onReply: (plan, reply) => this.fallback.remember(plan.baseKey, plan.rule, reply),
      degraded: (plan, cost, error) => this.degraded(plan, cost, error),
      leaseTtlMs: options.hotKey.leaseTtlMs,
      maxKeys: options.stateCacheSize,
      now: this.now,
      instances: () => this.instances,
    });
    this.membership = new Membership({
      client: options.client,
      instanceId: options.instanceId,
      heartbeatMs: options.heartbeatMs,
      ttlMs: options.memberTtlMs,
      region: options.region,
      logger: options.logger,
    });
    this.membership.start();
    options.rebalancer?.start();
  }

  /** The divisor of the fallback limit: the override, else the live instance count (last known while Redis is down). */
  get instances(): number {
    return this.options.instances ?? this.membership.count;
  }

  /** Lease script calls made (hot keys). */
  get leaseCalls(): number {
    return this.leaser.calls;
  }

  async decide(tenant: string, route: string, rule: Rule, cost = 1): Promise<Decision> {
    assertValidCost(rule, cost);
    const plan = this.plan(tenant, route, rule);
    this.membership.countRequest();
    const decision = await this.decideOn(plan, cost);
    this.stats.decisions++;
    this.stats.bySource[decision.source] = (this.stats.bySource[decision.source] ?? 0) + 1;
    if (decision.source !== 'redis') degradedDecisions.inc({ source: decision.source });
    return applyShadow(rule, decision);
  }

  async peek(tenant: string, route: string, rule: Rule): Promise<Decision> {
    const plan = this.plan(tenant, route, rule);
    try {
      const decision = await this.guarded(plan, 0, () => this.store.peek(plan.key, plan.rule));
      return decision;
    } catch (error) {
      this.noteFailure(error);
      const mode = rule.onStoreDown ?? 'fallback';
      if (mode !== 'fallback') return storeDownDecision(mode, plan.rule, this.options.breaker.resetTimeoutMs);
      return this.fallback.peek(plan.baseKey, this.fallbackRule(plan));
    }
  }

  async reset(tenant: string, route: string, rule: Rule): Promise<void> {
    const keys = keysOf(tenant, route, rule);
    const plan = this.plan(tenant, route, rule, 0);
    for (const key of keys) {
      this.negative.forget(key);
      this.leaser.forget(key);
    }
    this.fallback.forget(plan.baseKey);
    try {
      await withTimeout(Promise.all(keys.map((key) => this.store.reset(key))), this.options.adminTimeoutMs);
    } catch (error) {
      throw new SluiceError('ERR_STORE_UNAVAILABLE', `Redis did not reset the bucket: ${(error as Error).message}`, 'store');
    }
  }

  async inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo> {
    const plan = this.plan(tenant, route, rule, 0);
    try {
      return await withTimeout(this.store.inspect(plan.key, plan.rule), this.options.adminTimeoutMs);
    } catch {
      const info = await this.fallback.inspect(plan.baseKey, this.fallbackRule(plan));
      return { ...info, location: 'fallback (Redis unreachable)' };
    }
  }

  health(): EngineHealth {
    const reachable = this.breaker.closed;
    return {
      mode: reachable ? 'redis' : 'fallback',
      storeReachable: reachable,
      detail: `instances=${this.instances}${this.options.region ? ` region=${this.options.region}` : ''}`,
    };
  }

  async close(): Promise<void> {
    await this.options.rebalancer?.stop();
    await this.membership.stop();
    this.breaker.shutdown();
    await this.fallback.close();
    if (this.options.ownsClient) await this.store.close();
  }

  private plan(tenant: string, route: string, rule: Rule, shard?: number): Plan {
    return planFor(tenant, route, rule, this.regionShare(rule), shard);
  }

  private regionShare(rule: Rule): number {
    const region = this.options.region;
    if (region === undefined) return 1;
    return rule.regionShares?.[region] ?? this.membership.shares?.[region] ?? this.options.defaultRegionShare;
  }

  private async decideOn(plan: Plan, cost: number): Promise<Decision> {
    const batch = this.leaseBatch(plan);
    if (batch > 0) return this.leaser.decide(plan, cost, batch);
    if (this.leaser.has(plan.key)) this.leaser.forget(plan.key); // cooled down: unspent units are dropped, never over-admitted
    const cached = this.negative.get(plan.key, plan.fingerprint, cost, this.now());
    if (cached) return cached;
    try {
      const decision = await this.guarded(plan, cost, () => this.store.consume(plan.key, plan.rule, cost));
      this.fallback.remember(plan.baseKey, plan.rule, decision);
      this.negative.add(plan.key, plan.fingerprint, cost, decision, this.now());
      return decision;
    } catch (error) {
      return this.degraded(plan, cost, error);
    }
  }

  /** Units per lease for this request: the rule's own batch, the automatic one for a hot key, or 0 (no leasing). */
  private leaseBatch(plan: Plan): number {
    if (!isLeasable(plan.rule)) return 0;
    if (plan.original.lease) return plan.original.lease.batch;
    if (!this.hot.observe(plan.baseKey, this.now())) return 0;
    // Never lease more than this instance's share of the bucket, so one instance cannot hog a small limit.
    return Math.min(this.options.hotKey.batch, Math.max(1, Math.floor(capacityOf(plan.rule) / this.instances)));
  }

  /**
   * A Redis call that may take `units` from the plan's bucket, under the breaker
   * and the deadline. Its units count as in flight until Redis answers, even
   * after the deadline gave up on it: the fallback must not hand them out twice.
   */
  private guarded<T>(plan: Plan, units: number, call: () => Promise<T>): Promise<T> {
    return this.breaker.fire(() => {
      this.stats.storeCalls++;
      const running = call();
      if (units > 0) {
        this.inFlight.set(plan.baseKey, (this.inFlight.get(plan.baseKey) ?? 0) + units);
        const settle = () => {
          const left = (this.inFlight.get(plan.baseKey) ?? units) - units;
          if (left > 0) this.inFlight.set(plan.baseKey, left);
          else this.inFlight.delete(plan.baseKey);
        };
        running.then(settle, settle);
      }
      return withDeadline(running, this.watch, this.watch.channelOf(plan.key), this.options.deadlineMs);
    });
  }

  private degraded(plan: Plan, cost: number, error: unknown): Decision {
    this.noteFailure(error);
    const mode = plan.original.onStoreDown ?? 'fallback';
    if (mode !== 'fallback') return storeDownDecision(mode, plan.rule, this.options.breaker.resetTimeoutMs);
    // A fresh full bucket only once the breaker is open; before that, the last state Redis reported or a refusal.
    const pending = this.inFlight.get(plan.baseKey) ?? 0;
    const pendingMs = isTimeBased(plan.rule) ? (pending * 1000) / plan.rule.refillPerSecond : 0;
    const breakerOpen = !this.breaker.closed;
    const decision = this.fallback.decide(plan.baseKey, this.fallbackRule(plan), cost, breakerOpen, pendingMs);
    if (breakerOpen && decision.allowed) this.debts.add(plan.key, plan.rule, plan.fingerprint, cost);
    return decision;
  }

  /**
   * The breaker closed: charges what the fallback admitted while it was open to
   * the Redis buckets, a few keys at a time so a recovering Redis is not
   * flooded. Best effort: a debt Redis cannot take (bucket emptied meanwhile,
   * breaker open again) is forgiven, never retried.
   */
  private async chargeBack(): Promise<void> {
    const debts = this.debts.drain();
    let charged = 0;
    for (let i = 0; i < debts.length; i += CHARGE_CONCURRENCY) {
      const units = await Promise.all(debts.slice(i, i + CHARGE_CONCURRENCY).map((debt) => this.charge(debt)));
      for (const n of units) charged += n;
    }
    if (charged === 0) return;
    this.stats.chargedUnits += charged;
    fallbackChargedUnits.inc(charged);
    this.options.logger.info({ keys: debts.length, units: charged }, 'charged the fallback admissions of the outage to Redis');
  }

  /** Takes the debt from its bucket, or what is left of the bucket when it holds less; returns the units taken. */
  private async charge({ key, rule, units }: Debt): Promise<number> {
    try {
      const whole = await withTimeout(this.store.consume(key, rule, units), this.options.adminTimeoutMs);
      if (whole.allowed) return units;
      const left = Math.min(units, Math.floor(whole.remaining));
      if (left < 1) return 0;
      const part = await withTimeout(this.store.consume(key, rule, left), this.options.adminTimeoutMs);
      return part.allowed ? left : 0;
    } catch {
      return 0;
    }
  }

  /** This instance's part of the limit while Redis is away: 1/N, never below one unit. */
  private fallbackRule(plan: Plan): Rule {
    return scaleRule(plan.regionalRule, 1 / this.instances);
  }

  private noteFailure(error: unknown): void {
    if (isOpenBreakerError(error)) {
      this.stats.breakerRejects++;
      storeFailures.inc({ reason: 'breaker_open' });
    } else if (isDeadlineError(error)) {
      this.stats.deadlineTimeouts++;
      storeFailures.inc({ reason: 'deadline' });
    } else {
      this.stats.storeErrors++;
      storeFailures.inc({ reason: 'error' });
      this.options.logger.debug({ err: error }, 'Redis call failed');
    }
  }
}
