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
import { canAdjust } from '../stores/redis/adjust.js';
import { isLeasable } from '../stores/redis/lease.js';
import type { RedisClient } from '../stores/redis/scripts.js';
import { RedisStore } from '../stores/redis-store.js';
import type { BucketInfo } from '../stores/store.js';
import { type BreakerOptions, isOpenBreakerError, RedisBreaker } from './breaker.js';
import { ConnectionWatch } from './connection-watch.js';
import { isDeadlineError, withDeadline } from './deadline.js';
import { applyShadow, type Engine, type EngineHealth } from './engine.js';
import { type Debt, FallbackDebts } from './fallback-debts.js';
import { type LateOutcome, LateReplies } from './late-replies.js';
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
  /** Replies that came after the deadline, by what reconciling them with the local decision did (late-replies.ts). */
  lateReplies: Record<LateOutcome, number>;
  bySource: Partial<Record<DecisionSource, number>>;
}

/** Debts charged to Redis at once after an outage. */
const CHARGE_CONCURRENCY = 32;

/** Where `guarded` leaves the Redis call it sent, for reconciling a reply that comes after the deadline. */
interface Sent<T> {
  call?: Promise<T>;
}

export class ResilientEngine implements Engine {
  readonly stats: EngineStats;
  readonly store: RedisStore;
  readonly membership: Membership;
  private readonly breaker: RedisBreaker;
  private readonly watch: ConnectionWatch;
  private readonly fallback: FallbackLimiter;
  private readonly debts: FallbackDebts;
  private readonly late: LateReplies;
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
    this.late = new LateReplies({
      client: options.client,
      timeoutMs: options.adminTimeoutMs,
      logger: options.logger,
      onReply: (key, rule, redis) => this.fallback.remember(key, rule, redis),
    });
    this.stats = { decisions: 0, storeCalls: 0, deadlineTimeouts: 0, storeErrors: 0, breakerRejects: 0, chargedUnits: 0, lateReplies: this.late.counts, bySource: {} };
    this.fallback = new FallbackLimiter({
      maxKeys: options.fallbackMaxKeys,
      stateCacheSize: options.stateCacheSize,
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
    if (!this.breaker.opened) this.payDebt(plan.key);
    const sent: Sent<Decision> = {};
    try {
      const decision = await this.guarded(plan, cost, () => this.store.consume(plan.key, plan.rule, cost), sent);
      this.fallback.remember(plan.baseKey, plan.rule, decision);
      this.negative.add(plan.key, plan.fingerprint, cost, decision, this.now());
      return decision;
    } catch (error) {
      const late = sent.call !== undefined && isDeadlineError(error);
      const decision = this.degraded(plan, cost, error, late);
      if (late) this.reconcileLater(plan, cost, decision, sent.call!);
      return decision;
    }
  }

  /** Reconciles the late reply of `call` with `local`, what the fallback decided meanwhile. */
  private reconcileLater(plan: Plan, cost: number, local: Decision, call: Promise<Decision>): void {
    this.late.watch(plan.baseKey, plan.key, plan.rule, cost, local, call);
    if (local.allowed && local.source === 'fallback') {
      const rule = this.fallbackRule(plan);
      call.then(() => this.fallback.settle(plan.baseKey, rule, cost), () => undefined);
    }
  }

  /**
   * Redis answers again and this instance still owes the key what its fallback
   * admitted during the outage: the charge is sent before this request's own
   * call, on the same connection, so Redis runs it first and the refilled
   * bucket is never spent twice (a half-open probe included).
   */
  private payDebt(key: string): void {
    const debt = this.debts.take(key);
    if (debt === undefined) return;
    void this.charge(debt).then((units) => this.noteCharged(units));
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
  private guarded<T>(plan: Plan, units: number, call: () => Promise<T>, sent?: Sent<T>): Promise<T> {
    const channel = this.watch.channelOf(plan.key);
    const silenceMs = this.failureSilenceMs();
    // A half-open probe's units are not pending for others: if it misses its deadline, its reply is reconciled.
    const probe = !this.breaker.closed;
    const fired = this.breaker.fire(() => {
      this.stats.storeCalls++;
      const running = call();
      if (sent) sent.call = running;
      if (units > 0 && !(probe && sent)) {
        this.inFlight.set(plan.baseKey, (this.inFlight.get(plan.baseKey) ?? 0) + units);
        const settle = () => {
          const left = (this.inFlight.get(plan.baseKey) ?? units) - units;
          if (left > 0) this.inFlight.set(plan.baseKey, left);
          else this.inFlight.delete(plan.baseKey);
        };
        running.then(settle, settle);
      }
      return withDeadline(running, this.watch, channel, silenceMs);
    });
    // What the request waits for: one deadline.
    return withDeadline(fired, this.watch, channel, this.options.deadlineMs);
  }

  /**
   * How long a call may stay unanswered before the breaker counts a failure. A
   * slow but alive Redis (a busy machine) is not a down one: with the breaker
   * closed and the connection not lost, `silenceMs`, and the late reply is reconciled.
   * A lost connection (Redis killed) or a half-open probe fails at the deadline,
   * so the breaker opens, or stays open, as fast as before.
   */
  private failureSilenceMs(): number {
    const { deadlineMs, client, breaker } = this.options;
    const lost = client.status === 'reconnecting' || client.status === 'close' || client.status === 'end';
    return !lost && this.breaker.closed ? Math.max(deadlineMs, breaker.silenceMs) : deadlineMs;
  }

  /**
   * `late`: this request's own call is still running in Redis; its units are not
   * pending for this decision, since its reply is reconciled with it (late-replies.ts).
   * Other calls in flight stay pending until Redis answers them, so a burst whose
   * deadlines all fire at once is not admitted again locally.
   */
  private degraded(plan: Plan, cost: number, error: unknown, late = false): Decision {
    this.noteFailure(error);
    const mode = plan.original.onStoreDown ?? 'fallback';
    if (mode !== 'fallback') return storeDownDecision(mode, plan.rule, this.options.breaker.resetTimeoutMs);
    const pending = Math.max(0, (this.inFlight.get(plan.baseKey) ?? 0) - (late ? cost : 0));
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
    let keys = 0;
    let charged = 0;
    // Debts stay in the map until their turn: a request on an owed key meanwhile pays it first (payDebt).
    for (let debts = this.debts.take(CHARGE_CONCURRENCY); debts.length > 0; debts = this.debts.take(CHARGE_CONCURRENCY)) {
      keys += debts.length;
      for (const n of await Promise.all(debts.map((debt) => this.charge(debt)))) charged += n;
    }
    this.noteCharged(charged);
    if (charged > 0) this.options.logger.info({ keys, units: charged }, 'charged the fallback admissions of the outage to Redis');
  }

  private noteCharged(units: number): void {
    this.stats.chargedUnits += units;
    fallbackChargedUnits.inc(units);
  }

  /**
   * Takes the debt from its bucket whatever is left in it (a debt past empty),
   * or, for a policy without adjust, what is left when the bucket holds less;
   * returns the units taken.
   */
  private async charge(debt: Debt): Promise<number> {
    if (canAdjust(debt.rule)) return (await this.late.adjust(debt.key, debt.rule, debt.units)) ? debt.units : 0;
    const { key, rule, units } = debt;
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
