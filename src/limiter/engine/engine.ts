// The engine: what the gateway, the admin API and the library call to decide.
// It builds a bucket's key once from its ids (tag and name), checks every rule
// it is handed, and never rejects for the store: a failing store becomes a
// decision (the rule's onStoreDown; the resilience layer adds the fallback).
// Here: the Engine
// interface, one request's limits and their decision, the plain engine
// (StoreEngine), and one group's store call (consumeGroup).
//
// Both engines decide through one chain of steps (steps/compose.ts): the
// request's limits checked and planned, steps added with `use` (the
// dashboard's observer, tracing), the penalty step (penalized limits first,
// steps/compose.ts penaltyStep), the engine's own steps down to its store, and the
// outcome with shadow applied once (steps/compose.ts).
//
// Within one of the store's groups (one hash slot on Redis, everything on the
// memory store: Store.groups) the store decides the limits in one atomic call:
// every bucket charged, or none (src/policies/compose.ts and its Lua twin).
// Limits of different groups cannot share a script, so each group is decided
// on its own, in parallel (steps/store-steps.ts groupsStep):
// reserve-and-refund. If any group refuses, what the admitting groups took is
// given back (the store's adjust, a negative delta: refundStep). Never
// over-admits; a concurrent request may be refused while units are reserved
// and not yet refunded (docs/limits.md measures how often).
import type { Decision } from '../../core/decision.js';
import { type Bucket, keyOfBucket } from '../../core/ids.js';
import { checkRule, type Rule } from '../../policies/rule.js';
import type { BlockedKey, BucketInfo, Store } from '../../stores/store.js';
import { ChainStats, type EngineCounters } from '../metrics/stats.js';
import { type Call, compose, type Decide, isShadow, penaltyStep, type Reply, replyOfOne, RequestChain, type Step } from '../steps/compose.js';
import { groupsStep, refundStep, storeCallsOfPlans } from '../steps/store-steps.js';
import { type Plan, PlanCache, storeDownDecision, unsharded } from './plan.js';
import type { Engine, EngineHealth, LimitCall, LimitsDecision } from './types.js';

export type { EngineCounters } from '../metrics/stats.js';
export type { Engine, EngineHealth, EngineMode, LimitCall, LimitsDecision } from './types.js';

/** What a `closed` rule tells the client to wait when the plain engine's store fails. */
const STORE_DOWN_RETRY_MS = 1000;

/** The refund step's need of the plain engine: nothing cached to forget. */
const NOTHING_CACHED = { forget: () => undefined };

/**
 * The plain engine: one store, no deadline and no fallback. The memory-store
 * gateway runs on it. Over Redis, a failed call (not a slow one: there is no
 * deadline) is decided by the rule's onStoreDown, `fallback` read as `closed`
 * since there is no local limiter; createEngine gives the resilient engine.
 * A sharded rule is decided on its whole bucket here (no shards).
 */
export class StoreEngine implements Engine {
  private readonly stats = new ChainStats();
  private readonly plans = new PlanCache();
  private readonly chain: RequestChain;

  constructor(readonly store: Store) {
    const refund = { adjust: (bucket: Plan['bucket'], rule: Rule, delta: number) => this.refund(bucket, rule, delta) };
    const base = compose(
      penaltyStep((call) => this.refund(call.plan.bucket, call.plan.rule, -call.cost)),
      refundStep({ late: refund, negative: NOTHING_CACHED }),
      groupsStep((calls) => this.store.groups(calls)),
    )(this.terminal);
    this.chain = new RequestChain(base, (bucket, rule, penalty) => {
      const plan = this.plans.plan(bucket, unsharded(rule), 1);
      return penalty === undefined ? plan : { ...plan, penalty };
    });
  }

  decide(bucket: Bucket, rule: Rule, cost = 1): Promise<Decision> {
    return this.chain.decide([{ bucket, rule, cost }]).then(first);
  }

  /** One store call per group of the store (one in all on the memory store); a refusal refunds the other groups. */
  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision> {
    return this.chain.decide(calls);
  }

  use(step: Step): void {
    this.chain.use(step);
  }

  /** One group's call: a lone limit the plain (or penalized) consume, several the multi-limit one; a failure is the rules' onStoreDown. */
  private readonly terminal: Decide = (calls) => {
    this.stats.storeCalls++;
    try {
      return this.send(calls).then(
        (reply) => this.noted(reply),
        (error: unknown) => this.noted(this.storeDown(calls, error)),
      );
    } catch (error) {
      return Promise.resolve(this.noted(this.storeDown(calls, error)));
    }
  };

  private send(calls: readonly Call[]): Promise<Reply> {
    if (calls.length > 1) return this.store.consumeAll(storeCallsOfPlans(calls));
    const call = calls[0]!;
    const { plan, cost } = call;
    const sent = plan.penalty === undefined ? this.store.consume(plan.bucket, plan.rule, cost) : this.store.consumePenalized(plan.bucket, plan.rule, cost, plan.penalty);
    return sent.then((decision) => replyOfOne(call, decision));
  }

  /** A shadow limit never refuses the request, even as its rule's onStoreDown. */
  private storeDown(calls: readonly Call[], error: unknown): Reply {
    this.stats.noteFailure(error);
    const decisions = calls.map(({ plan }) => storeDownDecision(plan.original.onStoreDown === 'open' ? 'open' : 'closed', plan.rule, STORE_DOWN_RETRY_MS));
    return { admitted: decisions.every((decision, i) => decision.allowed || isShadow(calls[i]!)), decisions };
  }

  private noted(reply: Reply): Reply {
    for (const decision of reply.decisions) this.stats.noteDecision(decision);
    return reply;
  }

  /** A refund that fails leaves the units taken until the bucket refills: never over-admits. */
  private refund(bucket: Plan['bucket'], rule: Rule, delta: number): Promise<void> {
    return this.store.adjust?.(bucket, rule, delta).catch(() => undefined) ?? Promise.resolve();
  }

  async listBlocked(limit?: number): Promise<BlockedKey[]> {
    return this.store.listBlocked(limit);
  }

  async liftBlock(key: string): Promise<boolean> {
    return this.store.liftBlock(key);
  }

  async peek(bucket: Bucket, rule: Rule): Promise<Decision> {
    return this.store.peek(keyOfBucket(bucket), checkRule(rule));
  }

  async adjust(bucket: Bucket, rule: Rule, delta: number): Promise<void> {
    checkRule(rule);
    if (delta === 0) return;
    if (this.store.adjust === undefined) throw new Error(`the ${this.store.kind} store cannot adjust a bucket`);
    await this.store.adjust(keyOfBucket(bucket), rule, delta);
  }

  async reset(bucket: Bucket, rule?: Rule): Promise<void> {
    if (rule !== undefined) checkRule(rule);
    return this.store.reset(keyOfBucket(bucket));
  }

  async inspect(bucket: Bucket, rule: Rule): Promise<BucketInfo> {
    return this.store.inspect(keyOfBucket(bucket), checkRule(rule));
  }

  health(): EngineHealth {
    return { mode: this.store.kind === 'memory' ? 'memory' : 'redis', storeReachable: true };
  }

  counters(): EngineCounters {
    return this.stats.snapshot(1);
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

const first = (outcome: LimitsDecision): Decision => outcome.decisions[0]!;
