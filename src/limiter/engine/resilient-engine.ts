// The engine over a shared store (Redis) that keeps deciding when the store is
// slow or gone, and spares it when one tenant's key is hot. It plans each
// decision (bucket key, region share, shard) and hands a request's limits, one
// or several, to one chain of steps (steps/compose.ts RequestChain): those
// added with `use` (the dashboard's observer, tracing), the penalty step
// (steps/compose.ts penaltyStep: penalized limits first), then the decision chain
// buildChain (below) composes, and the outcome with shadow applied once.
// Around it, membership counts the live instances (the fallback's N) and an
// optional rebalancer moves the region shares.
//
// The decision chain over a shared store: steps of one signature
// (steps/compose.ts), in the order a decision flows, for a request of one
// limit or several:
//
//   leasing (steps/leaser.ts)          a lone leased key spends local units; a hot key starts leasing
//   → negative cache                   a key the store refused stays refused until its retry time
//     (steps/negative-cache.ts)        (a limit with a penalty box: only its blocks cached)
//   → refund (steps/store-steps.ts)    a refused request gives back what admitting groups took
//   → fallback (steps/store-steps.ts)  a failed call becomes the rule's onStoreDown decision
//   → groups (steps/store-steps.ts)    one store call per group of the store (hash slot)
//   → store (steps/store-steps.ts)     one group's call under the guard (deadline/guard.ts: breaker, deadline)
import type { Logger } from 'pino';
import type { Membership } from '../../cluster/membership.js';
import type { RegionRebalancer } from '../../cluster/region-rebalancer.js';
import type { Decision } from '../../core/decision.js';
import { SluiceError } from '../../core/errors.js';
import { assertPenaltyKey, type Bucket, bucketKey, bucketKeyOfPenalty } from '../../core/ids.js';
import { checkRule, type Rule } from '../../policies/rule.js';
import { withTimeout } from '../../core/timeout.js';
import { degradedDecisions, showDeadline } from '../../metrics/registry.js';
import type { Clock } from '../../stores/clock.js';
import type { BlockedKey, BucketInfo, SharedStore } from '../../stores/store.js';
import { type BreakerOptions, RedisBreaker } from '../deadline/breaker.js';
import { AdaptiveDeadline, FixedDeadline } from '../deadline/deadline.js';
import { StoreGuard } from '../deadline/guard.js';
import { DebtCollector } from '../fallback/debt-collector.js';
import { FallbackLimiter, StoreDown } from '../fallback/fallback.js';
import type { InstanceCount } from '../fallback/instances.js';
import { LateReplies } from '../fallback/late-replies.js';
import { ChainStats, type EngineCounters } from '../metrics/stats.js';
import { type Call, compose, type Decide, penaltyStep, type Planner, type Reply, RequestChain, type Step } from '../steps/compose.js';
import { LeasingStep } from '../steps/leaser.js';
import { NegativeCache, negativeStep } from '../steps/negative-cache.js';
import { fallbackStep, groupsStep, refundStep, storeTerminal } from '../steps/store-steps.js';
import { bucketsOf, type Plan, PlanCache, planFor, unsharded } from './plan.js';
import type { Engine, EngineHealth, LimitCall, LimitsDecision } from './types.js';

export interface ResilientEngineOptions {
  store: SharedStore;
  /** Close the store (and its client) with the engine. */
  ownsStore: boolean;
  chain: DecisionChain;
  membership: Membership;
  instances: InstanceCount;
  region: string | undefined;
  defaultRegionShare: number;
  /** Deadline of reset and inspect (admin calls, not on the request path). */
  adminTimeoutMs: number;
  /** Optional region-share rebalancer, started and stopped with the engine. */
  rebalancer?: RegionRebalancer;
}

export class ResilientEngine implements Engine {
  readonly store: SharedStore;
  readonly membership: Membership;
  private readonly chain: DecisionChain;
  private readonly plans = new PlanCache();
  private readonly hideDeadline: () => void;
  private readonly requests: RequestChain;

  constructor(private readonly options: ResilientEngineOptions) {
    this.store = options.store;
    this.chain = options.chain;
    this.requests = new RequestChain(penaltyStep((call, decision) => this.refundPenalized(call, decision))(this.counted), this.planned);
    this.hideDeadline = showDeadline(options.chain.deadline.ms);
    this.membership = options.membership;
    this.membership.start();
    options.rebalancer?.start();
  }

  /** What a decision waits for Redis now, ms: store.deadlineMs, or the adaptive deadline. */
  get deadlineMs(): number {
    return this.chain.deadline.ms();
  }

  /** The divisor of the fallback limit: the override, else the live instance count (last known while Redis is down). */
  get instances(): number {
    return this.options.instances.value;
  }

  decide(bucket: Bucket, rule: Rule, cost = 1): Promise<Decision> {
    return this.requests.decide([{ bucket, rule, cost }]).then(first);
  }

  /** One limit or several take the same chain (with leasing for a lone one); penalized limits first (steps/compose.ts penaltyStep). */
  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision> {
    return this.requests.decide(calls);
  }

  use(step: Step): void {
    this.requests.use(step);
  }

  /** The decision chain below the penalty step, each call to it counted for membership and each decision in the stats. */
  private readonly counted: Decide = (calls) => {
    this.membership.countRequest();
    return this.chain.decide(calls).then(this.noted);
  };

  /** Each decision of a reply in the stats: made once, not a closure per request. */
  private readonly noted = (reply: Reply): Reply => {
    for (const decision of reply.decisions) this.noteDecision(decision);
    return reply;
  };

  private noteDecision(decision: Decision): void {
    this.chain.stats.noteDecision(decision);
    if (decision.source !== 'redis') degradedDecisions.inc({ source: decision.source });
  }

  /**
   * A limit with a penalty box: one key (a stored rule's shards are not used:
   * the box counts the refusals of one bucket), no leasing; its blocks are
   * remembered briefly by the negative cache. Redis down: the fallback
   * decides the limit alone, without the box.
   */
  private readonly planned: Planner = (bucket, rule, penalty) => {
    if (penalty === undefined) return this.plan(bucket, rule);
    return { ...this.plan(bucket, unsharded(rule)), penalty };
  };

  /** Only what Redis took is given back; a fallback admission stays charged (it is owed to Redis as any outage admission). */
  private async refundPenalized(call: Call, decision: Decision): Promise<void> {
    if (decision.source !== 'redis') return;
    const { plan } = call;
    await withTimeout(this.store.adjust(plan.bucket, plan.rule, -call.cost), this.options.adminTimeoutMs);
    this.chain.negative.forget(plan.bucket.key);
  }

  async listBlocked(limit?: number): Promise<BlockedKey[]> {
    return this.adminCall(() => this.store.listBlocked(limit), 'list the blocked keys');
  }

  /** Lifts the block on Redis, and forgets this instance's cached refusal of the bucket at once (the others' within BLOCK_CACHE_MS). */
  async liftBlock(key: string): Promise<boolean> {
    assertPenaltyKey(key);
    const lifted = await this.adminCall(async () => this.store.liftBlock(key), 'lift the block');
    this.chain.negative.forget(bucketKeyOfPenalty(key));
    return lifted;
  }

  private async adminCall<T>(call: () => T | Promise<T>, what: string): Promise<T> {
    try {
      return await withTimeout(Promise.resolve().then(call), this.options.adminTimeoutMs);
    } catch (error) {
      if (error instanceof SluiceError) throw error;
      throw new SluiceError('ERR_STORE_UNAVAILABLE', `Redis did not ${what}: ${(error as Error).message}`, 'store');
    }
  }

  async peek(bucket: Bucket, rule: Rule): Promise<Decision> {
    return this.chain.storeDown.peek(this.plan(bucket, checkRule(rule)));
  }

  /** A settle's difference, sent to Redis (one atomic adjust script) within the admin deadline; a sharded rule's goes to one random shard, like a charge. */
  async adjust(bucket: Bucket, rule: Rule, delta: number): Promise<void> {
    checkRule(rule);
    if (delta === 0) return;
    const plan = this.plan(bucket, rule);
    if (this.store.connection.lost()) throw new SluiceError('ERR_STORE_UNAVAILABLE', 'Redis is unreachable: the bucket was not adjusted', 'store');
    await withTimeout(this.store.adjust(plan.bucket, plan.rule, delta), this.options.adminTimeoutMs);
  }

  async reset(bucket: Bucket, rule: Rule): Promise<void> {
    checkRule(rule);
    const buckets = bucketsOf(bucket, rule);
    const plan = this.plan(bucket, rule, 0);
    for (const { key } of buckets) {
      this.chain.negative.forget(key);
      this.chain.leasing.forget(key);
    }
    this.chain.fallback.forget(plan.baseKey);
    try {
      await withTimeout(Promise.all(buckets.map((each) => this.store.reset(each))), this.options.adminTimeoutMs);
    } catch (error) {
      throw new SluiceError('ERR_STORE_UNAVAILABLE', `Redis did not reset the bucket: ${(error as Error).message}`, 'store');
    }
  }

  async inspect(bucket: Bucket, rule: Rule): Promise<BucketInfo> {
    checkRule(rule);
    const plan = this.plan(bucket, rule, 0);
    try {
      return await withTimeout(this.store.inspect(plan.bucket, plan.rule), this.options.adminTimeoutMs);
    } catch {
      const info = await this.chain.fallback.inspect(plan.baseKey, this.chain.storeDown.fallbackRule(plan));
      return { ...info, location: 'fallback (Redis unreachable)' };
    }
  }

  health(): EngineHealth {
    // A client that never connected (a refused password, a failed handshake at start) is down before any call says so.
    const problem = this.store.connectionProblem?.();
    const reachable = this.chain.breaker.closed && !problem?.neverConnected;
    const reason = reachable ? undefined : (problem?.reason ?? this.chain.breaker.lastFailure);
    return {
      mode: reachable ? 'redis' : 'fallback',
      storeReachable: reachable,
      detail: `instances=${this.instances}${this.options.region ? ` region=${this.options.region}` : ''}`,
      deadlineMs: this.deadlineMs,
      ...(reason !== undefined ? { reason } : {}),
    };
  }

  counters(): EngineCounters {
    return this.chain.stats.snapshot(this.instances);
  }

  async close(): Promise<void> {
    this.hideDeadline();
    await this.options.rebalancer?.stop();
    await this.membership.stop();
    this.chain.breaker.shutdown();
    await this.chain.fallback.close();
    if (this.options.ownsStore) await this.store.close();
  }

  private plan(bucket: Bucket, rule: Rule, shard?: number): Plan {
    if (shard === undefined) return this.plans.plan(bucket, rule, this.regionShare(rule));
    return planFor(bucket, rule, this.regionShare(rule), shard);
  }

  private regionShare(rule: Rule): number {
    const region = this.options.region;
    if (region === undefined) return 1;
    return rule.regionShares?.[region] ?? this.membership.shares?.[region] ?? this.options.defaultRegionShare;
  }
}

const first = (outcome: LimitsDecision): Decision => outcome.decisions[0]!;

export interface ChainOptions {
  store: SharedStore;
  /** A fixed deadline, ms; undefined: adaptive (deadline.ts AdaptiveDeadline). */
  deadlineMs?: number | undefined;
  breaker: BreakerOptions;
  hotKey: { autoLeaseRatePerSec: number; batch: number; leaseTtlMs: number };
  negativeCacheSize: number;
  stateCacheSize: number;
  fallbackMaxKeys: number;
  /** Deadline of the calls off the request path (late-reply corrections, outage charges). */
  adminTimeoutMs: number;
  instances: InstanceCount;
  logger: Logger;
  now: Clock;
}

/** The built chain: the composed decision, and the parts the engine also reaches (peek, reset, inspect, health, close). */
export interface DecisionChain {
  /** A request's limits (one or several; a penalized one alone) decided together. */
  decide: Decide;
  leasing: LeasingStep;
  negative: NegativeCache;
  storeDown: StoreDown;
  fallback: FallbackLimiter;
  breaker: RedisBreaker;
  /** The deadline of a store call sent now, ms, fixed or adaptive. */
  deadline: { readonly adaptive: boolean; ms(): number };
  stats: ChainStats;
}

/** What the breaker's own probe asks: a peek (the policy scripts run, nothing is written) of a bucket no tenant has. */
const PROBE_BUCKET = bucketKey('~probe', 'breaker');
const PROBE_RULE: Rule = { policy: 'token_bucket', capacity: 1, refillPerSecond: 1 };

export function buildChain(options: ChainOptions): DecisionChain {
  const { store, logger, now, instances } = options;
  const stats = new ChainStats(logger);
  // `debts` is built below (it needs the fallback); the fallback asks it only once decisions flow.
  const owes = (key: string): boolean => debts.owes(key);
  const fallback = new FallbackLimiter({ maxKeys: options.fallbackMaxKeys, stateCacheSize: options.stateCacheSize, owes, now });
  const late = new LateReplies({ store, timeoutMs: options.adminTimeoutMs, logger, fallback, counts: stats.lateReplies, stats, now });
  const deadline = options.deadlineMs === undefined ? new AdaptiveDeadline(now()) : new FixedDeadline(options.deadlineMs);
  const current = { adaptive: deadline.adaptive, ms: () => deadline.msAt(now()) };
  const debts = new DebtCollector({ store, maxKeys: options.fallbackMaxKeys, timeoutMs: options.adminTimeoutMs, peekTimeoutMs: current.ms, fallback, stats, logger });
  const breaker = new RedisBreaker(
    options.breaker,
    logger,
    {
      onOpen: () => fallback.beginEpisode(),
      onClose: () => {
        fallback.endEpisode();
        void debts.chargeAll();
      },
    },
    () => store.peek(PROBE_BUCKET, PROBE_RULE),
  );
  const guard = new StoreGuard({ store, breaker, deadline, stats, now });
  const storeDown = new StoreDown({ guard, fallback, debts, late, stats, instances, retryAfterMs: options.breaker.resetTimeoutMs });
  const negative = new NegativeCache(options.negativeCacheSize);
  const leasing = new LeasingStep({
    below: storeDown,
    canLease: (rule) => store.canLease(rule),
    negative,
    hotKey: options.hotKey,
    maxKeys: options.stateCacheSize,
    now,
    instances,
    stats,
  });
  const decide = compose(
    leasing.step,
    negativeStep(negative, now),
    refundStep({ late, negative }),
    fallbackStep({ storeDown, fallback, guard, debts, late, stats }),
    groupsStep((calls) => store.groups(calls)),
  )(storeTerminal({ guard, debts, fallback, late }));
  return { decide, leasing, negative, storeDown, fallback, breaker, deadline: current, stats };
}
