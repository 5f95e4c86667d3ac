// The engine over a shared store (Redis) that keeps deciding when the store is
// slow or gone, and spares it when one tenant's key is hot. It plans each
// decision (bucket key, region share, shard) and hands a request's limits, one
// or several, to one chain of steps: those added with `use` (the dashboard's
// observer, tracing), the penalty step (penalized limits first), then the
// decision chain (steps/chain.ts: leasing → negative cache → refund →
// fallback → store groups → breaker and deadline → store), the outcome with
// shadow applied once (steps/compose.ts); around
// it, membership counts the live instances (the fallback's N) and an optional
// rebalancer moves the region shares.
import type { Membership } from '../../cluster/membership.js';
import type { RegionRebalancer } from '../../cluster/region-rebalancer.js';
import type { Decision } from '../../core/decision.js';
import { SluiceError } from '../../core/errors.js';
import { assertPenaltyKey, type Bucket, bucketKeyOfPenalty } from '../../core/ids.js';
import { checkRule, type Rule } from '../../core/rule.js';
import { withTimeout } from '../../core/timeout.js';
import type { BlockedKey, BucketInfo, SharedStore } from '../../stores/store.js';
import type { InstanceCount } from '../fallback/instances.js';
import { degradedDecisions, showDeadline } from '../../metrics/registry.js';
import type { EngineCounters } from '../metrics/stats.js';
import type { DecisionChain } from '../steps/chain.js';
import { type Call, type Decide, type Planner, RequestChain, type Step } from '../steps/compose.js';
import { penaltyStep } from '../steps/penalty-step.js';
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

  /** One limit or several take the same chain (with leasing for a lone one); penalized limits first (steps/penalty-step.ts). */
  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision> {
    return this.requests.decide(calls);
  }

  use(step: Step): void {
    this.requests.use(step);
  }

  /** The decision chain below the penalty step, each call to it counted for membership and each decision in the stats. */
  private readonly counted: Decide = (calls) => {
    this.membership.countRequest();
    return this.chain.decide(calls).then((reply) => {
      for (const decision of reply.decisions) this.noteDecision(decision);
      return reply;
    });
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
