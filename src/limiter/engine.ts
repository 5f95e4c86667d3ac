// The engine: what the gateway, the admin API and the library call to decide.
// It maps (tenant, route) to a bucket key, applies shadow mode, and never
// rejects: a failing store becomes a decision (see the resilience layer).
import type { Decision } from '../core/decision.js';
import { bucketKey } from '../core/ids.js';
import { assertValidCost, type Rule } from '../core/rule.js';
import type { BucketInfo, GroupReply, SharedStore, Store, StoreCall } from '../stores/store.js';
import { consumeGroup, decideOne, limitsDecision, mergeGroups, slotGroups, storeCallsOf, toRefund } from './decide-all.js';
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

/** The plain engine: one store, no fallback. The memory-store gateway runs on it. */
export class StoreEngine implements Engine {
  private readonly stats = new ChainStats();

  constructor(private readonly store: Store) {}

  async decide(tenant: string, route: string, rule: Rule, cost = 1): Promise<Decision> {
    assertValidCost(rule, cost);
    this.stats.storeCalls++;
    const decision = await this.store.consume(bucketKey(tenant, route), rule, cost);
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
    await Promise.all(refunds.map((call) => (this.store as SharedStore).adjust(call.bucket, call.rule, -call.cost)));
    for (const decision of reply.decisions) this.stats.noteDecision(decision);
    return limitsDecision(calls, reply);
  }

  private consumeGroup(group: StoreCall[]): Promise<GroupReply> {
    this.stats.storeCalls++;
    return consumeGroup(this.store, group);
  }

  peek(tenant: string, route: string, rule: Rule): Promise<Decision> {
    return this.store.peek(bucketKey(tenant, route), rule);
  }

  reset(tenant: string, route: string): Promise<void> {
    return this.store.reset(bucketKey(tenant, route));
  }

  inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo> {
    return this.store.inspect(bucketKey(tenant, route), rule);
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
