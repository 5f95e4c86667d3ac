// The engine: what the gateway, the admin API and the library call to decide.
// It maps (tenant, route) to a bucket key, applies shadow mode, checks every
// rule it is handed, and never rejects for the store: a failing store becomes
// a decision (the rule's onStoreDown; the resilience layer adds the fallback).
import type { Decision } from '../core/decision.js';
import { bucketKey } from '../core/ids.js';
import { assertValidCost, checkRule, type Rule } from '../core/rule.js';
import type { BucketInfo, GroupReply, SharedStore, Store, StoreCall } from '../stores/store.js';
import { consumeGroup, decideOne, limitsDecision, mergeGroups, slotGroups, storeCallsOf, toRefund } from './decide-all.js';
import { storeDownDecision } from './plan.js';
import { ChainStats, type EngineCounters } from './stats.js';

export type { EngineCounters } from './stats.js';

export type EngineMode = 'memory' | 'redis' | 'fallback';

export interface EngineHealth {
  /** Which runtime decides right now. */
  mode: EngineMode;
  /** Whether the shared store answers (always true for the memory store). */
  storeReachable: boolean;
  detail?: string;
  /** While the store is unreachable: why, when known (a refused password, a failed TLS handshake, the last failed call's error). */
  reason?: string;
}

/** One limit of a request as the engine decides it: its bucket (`rl:{tag}:name`), rule and cost. */
export interface LimitCall {
  readonly tag: string;
  readonly name: string;
  readonly rule: Rule;
  readonly cost: number;
}

/** The limits of one request, decided together. */
export interface LimitsDecision {
  /** Whether every limit admitted the request. */
  allowed: boolean;
  /** One decision per call, in the calls' order. */
  decisions: Decision[];
  /** The limit the response describes: the one that refused, else the one closest to exhaustion. */
  governing: number;
  /** Each limit's own decision before shadow mode (a shadow limit's would-be refusal, for the dashboard). */
  enforced?: Decision[];
  /**
   * Whether each limit was consulted; absent = all were. A request refused by
   * the negative cache consults only the refusing limit: the others' decisions
   * are placeholders (not charged, their state unknown) and headers leave them out.
   */
  consulted?: boolean[];
}

export interface Engine {
  /** Decides one request of `tenant` on `route`. Never rejects for a store failure. */
  decide(tenant: string, route: string, rule: Rule, cost?: number): Promise<Decision>;
  /**
   * Decides a request's limits together (src/limiter/decide-all.ts): admitted
   * only when every limit admits, and a refused request is charged to no
   * bucket. Never rejects for a store failure.
   */
  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision>;
  peek(tenant: string, route: string, rule: Rule): Promise<Decision>;
  reset(tenant: string, route: string, rule: Rule): Promise<void>;
  inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo>;
  health(): EngineHealth;
  /** What the engine counted (decisions, store calls, failures…): for tests, benchmarks and the dashboard. */
  counters(): EngineCounters;
  close(): Promise<void>;
}

/** A shadow rule is counted but never refuses; the decision says so. */
export function applyShadow(rule: Rule, decision: Decision): Decision {
  if (!rule.shadow) return decision;
  return { ...decision, allowed: true, retryAfterMs: 0, delayMs: 0, source: 'shadow' };
}

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
    if (calls.length === 1) return decideOne(this, calls[0]!);
    const storeCalls = storeCallsOf(calls);
    const groups = slotGroups(storeCalls, this.store.kind === 'memory');
    const replies = await Promise.all(groups.map((group) => this.consumeGroup(group.map((i) => storeCalls[i]!))));
    const reply = mergeGroups(storeCalls, groups, replies);
    const refunds = toRefund(!reply.admitted, storeCalls, groups, replies);
    // A refund that fails leaves the units taken until the bucket refills: never over-admits.
    await Promise.all(refunds.map((call) => (this.store as SharedStore).adjust(call.bucket, call.rule, -call.cost).catch(() => undefined)));
    for (const decision of reply.decisions) this.stats.noteDecision(decision);
    return limitsDecision(calls, reply);
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
