// The engine: what the gateway, the admin API and the library call to decide.
// It maps (tenant, route) to a bucket key, applies shadow mode, checks every
// rule it is handed, and never rejects for the store: a failing store becomes
// a decision (the rule's onStoreDown; the resilience layer adds the fallback).
import type { Decision } from '../core/decision.js';
import { bucketKey } from '../core/ids.js';
import { assertValidCost, checkRule, type Rule } from '../core/rule.js';
import type { BlockedKey, BucketInfo, GroupReply, SharedStore, Store, StoreCall } from '../stores/store.js';
import { decideWithPenalties, hasPenalty, type PenalizedCall } from './penalized-all.js';
import { consumeGroup, decideOne, limitsDecision, mergeGroups, storeCallsOf, toRefund } from './decide-all.js';
import { storeDownDecision } from './plan.js';
import { applyShadow, type Engine, type EngineHealth, type LimitCall, type LimitsDecision } from './engine-types.js';
import { ChainStats, type EngineCounters } from './stats.js';

export type { EngineCounters } from './stats.js';
export { applyShadow, type Engine, type EngineHealth, type EngineMode, type LimitCall, type LimitsDecision } from './engine-types.js';

/** What a `closed` rule tells the client to wait when the plain engine's store fails. */
const STORE_DOWN_RETRY_MS = 1000;

/**
 * The plain engine: one store, no deadline and no fallback. The memory-store
 * gateway runs on it. Over Redis, a failed call (not a slow one: there is no
 * deadline) is decided by the rule's onStoreDown, `fallback` read as `closed`
 * since there is no local limiter; createEngine gives the resilient engine.
 */
export class StoreEngine implements Engine {
  private readonly stats = new ChainStats();

  constructor(readonly store: Store) {}

  async decide(tenant: string, route: string, rule: Rule, cost = 1): Promise<Decision> {
    checkRule(rule);
    assertValidCost(rule, cost);
    const bucket = bucketKey(tenant, route);
    this.stats.storeCalls++;
    let decision: Decision;
    try {
      decision = await this.store.consume(bucket, rule, cost);
    } catch (error) {
      decision = this.storeDown(rule, error);
    }
    this.stats.noteDecision(decision);
    return applyShadow(rule, decision);
  }

  /** One store call per hash slot (one in all on the memory store); a refusal refunds the other slots. */
  async decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision> {
    if (calls.some(hasPenalty)) return decideWithPenalties(calls, this.penaltyParts);
    if (calls.length === 1) return decideOne(this, calls[0]!);
    const storeCalls = storeCallsOf(calls);
    const groups = this.store.groups(storeCalls);
    const replies = await Promise.all(groups.map((group) => this.consumeGroup(group.map((i) => storeCalls[i]!))));
    const reply = mergeGroups(storeCalls, groups, replies);
    const refunds = toRefund(!reply.admitted, storeCalls, groups, replies);
    // A refund that fails leaves the units taken until the bucket refills: never over-admits.
    await Promise.all(refunds.map((call) => (this.store as SharedStore).adjust(call.bucket, call.rule, -call.cost).catch(() => undefined)));
    for (const decision of reply.decisions) this.stats.noteDecision(decision);
    return limitsDecision(calls, reply);
  }

  private readonly penaltyParts = {
    one: (call: PenalizedCall) => this.decidePenalized(call),
    rest: (calls: readonly LimitCall[]) => this.decideAll(calls),
    refund: (call: LimitCall, _decision: Decision) => this.store.adjust?.(bucketKey(call.tag, call.name), call.rule, -call.cost) ?? Promise.resolve(),
  };

  /** A limit with a penalty box: one store call decides the limit and the box together. */
  private async decidePenalized(call: PenalizedCall): Promise<Decision> {
    checkRule(call.rule);
    assertValidCost(call.rule, call.cost);
    this.stats.storeCalls++;
    let decision: Decision;
    try {
      decision = await this.store.consumePenalized(bucketKey(call.tag, call.name), call.rule, call.cost, call.penalty);
    } catch (error) {
      decision = this.storeDown(call.rule, error);
    }
    this.stats.noteDecision(decision);
    return decision;
  }

  async listBlocked(limit?: number): Promise<BlockedKey[]> {
    return this.store.listBlocked(limit);
  }

  async liftBlock(key: string): Promise<boolean> {
    return this.store.liftBlock(key);
  }

  private async consumeGroup(group: StoreCall[]): Promise<GroupReply> {
    this.stats.storeCalls++;
    try {
      return await consumeGroup(this.store, group);
    } catch (error) {
      const decisions = group.map((call) => this.storeDown(call.rule, error));
      return { admitted: decisions.every((decision) => decision.allowed), decisions };
    }
  }

  private storeDown(rule: Rule, error: unknown): Decision {
    this.stats.noteFailure(error);
    return storeDownDecision(rule.onStoreDown === 'open' ? 'open' : 'closed', rule, STORE_DOWN_RETRY_MS);
  }

  async peek(tenant: string, route: string, rule: Rule): Promise<Decision> {
    return this.store.peek(bucketKey(tenant, route), checkRule(rule));
  }

  async adjust(tenant: string, route: string, rule: Rule, delta: number): Promise<void> {
    checkRule(rule);
    if (delta === 0) return;
    if (this.store.adjust === undefined) throw new Error(`the ${this.store.kind} store cannot adjust a bucket`);
    await this.store.adjust(bucketKey(tenant, route), rule, delta);
  }

  async reset(tenant: string, route: string, rule?: Rule): Promise<void> {
    if (rule !== undefined) checkRule(rule);
    return this.store.reset(bucketKey(tenant, route));
  }

  async inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo> {
    return this.store.inspect(bucketKey(tenant, route), checkRule(rule));
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
