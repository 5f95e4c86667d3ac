// The engine: what the gateway, the admin API and the library call to decide.
// It maps (tenant, route) to a bucket key, applies shadow mode, checks every
// rule it is handed, and never rejects for the store: a failing store becomes
// a decision (the rule's onStoreDown; the resilience layer adds the fallback).
// Here: the Engine interface, one request's limits and their decision, shadow
// mode, the plain engine (StoreEngine), and the parts every engine shares to
// decide a request's limits together.
//
// Within one of the store's groups (one hash slot on Redis, everything on the
// memory store: Store.groups) the store decides the limits in one atomic call:
// every bucket charged, or none (src/policies/compose.ts and its Lua twin).
// Limits of different groups cannot share a script, so each group is decided
// on its own, in parallel:
// reserve-and-refund. If any group refuses, what the admitting groups took is
// given back (the store's adjust, a negative delta). Never over-admits; a
// concurrent request may be refused while units are reserved and not yet
// refunded (docs/limits.md measures how often).
//
// A request's limits when some carry a penalty box (policies/penalty/). A
// penalized limit is decided with its box in one store call
// (Store.consumePenalized), which cannot share the multi-limit script, so:
//
//   1. the penalized limits first, each in its own call: a blocked key is
//      refused there, and the request's other limits are not consulted (a
//      blocked request costs one store call, and is charged nowhere);
//   2. if every penalized limit admitted, the other limits as the engine
//      decides them without a box (one script per slot);
//   3. if those refuse, what the penalized limits took is given back, as a
//      refusal across slots is (reserve-and-refund, above).
//
// A refusal of a penalized limit is counted by its box (in step 1); a request
// refused by another limit counts nothing in the box.
import type { Decision } from '../../core/decision.js';
import { bucketKey } from '../../core/ids.js';
import { assertValidCost, capacityOf, checkRule, type Rule } from '../../core/rule.js';
import type { PenaltyConfig } from '../../policies/penalty/model.js';
import type { BlockedKey, BucketInfo, GroupReply, SharedStore, Store, StoreCall } from '../../stores/store.js';
import { storeDownDecision } from './plan.js';
import { ChainStats, type EngineCounters } from '../metrics/stats.js';

export type { EngineCounters } from '../metrics/stats.js';

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
    const storeCalls = storeCallsOf(calls);
    const groups = this.store.groups(storeCalls);
    const replies = await Promise.all(groups.map((group) => this.consumeGroup(group.map((i) => storeCalls[i]!))));
    const reply = mergeGroups(storeCalls, groups, replies);
    // A lone shadow limit never refuses, even as its rule's onStoreDown (several: the group's store-down reply decides).
    if (storeCalls.length === 1 && storeCalls[0]!.shadow) reply.admitted = true;
    const refunds = toRefund(!reply.admitted, storeCalls, groups, replies);
    // A refund that fails leaves the units taken until the bucket refills: never over-admits.
    await Promise.all(refunds.map((call) => (this.store as SharedStore).adjust(call.bucket, call.rule, -call.cost).catch(() => undefined)));
    for (const decision of reply.decisions) this.stats.noteDecision(decision);
    return limitsDecision(calls, reply, calls.length > 1);
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

export type EngineMode = 'memory' | 'redis' | 'fallback';

export interface EngineHealth {
  /** Which runtime decides right now. */
  mode: EngineMode;
  /** Whether the shared store answers (always true for the memory store). */
  storeReachable: boolean;
  detail?: string;
  /** While the store is unreachable: why, when known (a refused password, a failed TLS handshake, the last failed call's error). */
  reason?: string;
  /** Over Redis: what a decision waits for it now, ms (store.deadlineMs, or the adaptive deadline). */
  deadlineMs?: number;
}

/** One limit of a request as the engine decides it: its bucket (`rl:{tag}:name`), rule and cost. */
export interface LimitCall {
  readonly tag: string;
  readonly name: string;
  readonly rule: Rule;
  readonly cost: number;
  /** The limit's penalty box (policies/penalty/): decided with it in one store call (decideWithPenalties); absent = none. */
  readonly penalty?: PenaltyConfig | undefined;
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
   * Decides a request's limits together (storeCallsOf, mergeGroups, toRefund below): admitted
   * only when every limit admits, and a refused request is charged to no
   * bucket. Never rejects for a store failure.
   */
  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision>;
  peek(tenant: string, route: string, rule: Rule): Promise<Decision>;
  /**
   * Takes `delta` more units from a bucket already charged, whatever its limit
   * (a debt past empty, repaid from the refill), or gives them back (negative):
   * a reservation settled (src/usage/). Rejects when the store did not take it.
   */
  adjust?(tenant: string, route: string, rule: Rule, delta: number): Promise<void>;
  reset(tenant: string, route: string, rule: Rule): Promise<void>;
  inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo>;
  /** The running penalty blocks across the store, soonest to end first, at most `limit` (the admin API's list). */
  listBlocked(limit?: number): Promise<BlockedKey[]>;
  /** Lifts the block of a listed penalty key and forgives its level; whether there was one. This engine forgets what it cached of it. */
  liftBlock(key: string): Promise<boolean>;
  health(): EngineHealth;
  /** What the engine counted (decisions, store calls, failures…): for tests, benchmarks and the dashboard. */
  counters(): EngineCounters;
  close(): Promise<void>;
}

/** A shadow rule is counted but never refuses; the decision says so. */
export function applyShadow(rule: Rule, decision: Decision): Decision {
  if (!rule.shadow) return decision;
  const shadowed: Decision = { ...decision, allowed: true, retryAfterMs: 0, delayMs: 0, source: 'shadow' };
  if (!decision.allowed) shadowed.shadowRefused = true;
  return shadowed;
}

/** The calls' buckets and shadow flags, each rule checked and each cost against its rule. */
export function storeCallsOf(calls: readonly LimitCall[]): StoreCall[] {
  if (calls.length === 0) throw new RangeError('decideAll needs at least one limit');
  return calls.map((call, i) => {
    // A lone limit's errors name `rule`, as the single decide's do.
    checkRule(call.rule, calls.length === 1 ? 'rule' : `calls.${i}.rule`);
    assertValidCost(call.rule, call.cost);
    return { bucket: bucketKey(call.tag, call.name), rule: call.rule, cost: call.cost, shadow: call.rule.shadow === true };
  });
}

/** One group's call: a lone limit takes the plain (lighter) script, several the multi-limit one. */
export function consumeGroup(store: Store, group: readonly StoreCall[]): Promise<GroupReply> {
  if (group.length > 1) return store.consumeAll(group);
  const call = group[0]!;
  return store.consume(call.bucket, call.rule, call.cost).then((decision) => ({ admitted: decision.allowed || call.shadow, decisions: [decision] }));
}

/**
 * The groups' replies as one: admitted when every group admitted. A group that
 * admitted a refused request is refunded by the caller; its limits report the
 * units given back (remaining + cost), as a peek after the refund would.
 */
export function mergeGroups(calls: readonly StoreCall[], groups: readonly number[][], replies: readonly GroupReply[]): GroupReply {
  const admitted = replies.every((reply) => reply.admitted);
  const decisions: Decision[] = new Array(calls.length);
  groups.forEach((group, g) => {
    const reply = replies[g]!;
    group.forEach((index, k) => {
      const decision = reply.decisions[k]!;
      const refunded = !admitted && reply.admitted && decision.allowed;
      decisions[index] = refunded ? { ...decision, remaining: Math.min(decision.limit, decision.remaining + calls[index]!.cost) } : decision;
    });
  });
  return { admitted, decisions };
}

/** The calls a refused request must give back: those of the store's groups (`groups`, `replies`) that admitted it. */
export function toRefund(refused: boolean, calls: readonly StoreCall[], groups: readonly number[][], replies: readonly GroupReply[]): StoreCall[] {
  if (!refused) return [];
  const out: StoreCall[] = [];
  groups.forEach((group, g) => {
    const reply = replies[g]!;
    if (!reply.admitted) return;
    group.forEach((index, k) => {
      if (reply.decisions[k]!.allowed && calls[index]!.cost > 0) out.push(calls[index]!);
    });
  });
  return out;
}

/**
 * The request's outcome: shadow applied per limit, and the limit the response
 * describes. `withEnforced` false: no `enforced` list, as a lone (unpenalized)
 * limit's outcome has always come (the gateway's verdict and settlement then
 * read the shadowed decision).
 */
export function limitsDecision(calls: readonly LimitCall[], reply: GroupReply, withEnforced = true): LimitsDecision {
  const enforced = reply.decisions;
  const decisions = enforced.map((decision, i) => applyShadow(calls[i]!.rule, decision));
  if (!reply.admitted) {
    const governing = Math.max(0, decisions.findIndex((d) => !d.allowed));
    return { allowed: false, decisions, governing, ...(withEnforced ? { enforced } : {}), ...(reply.consulted ? { consulted: reply.consulted } : {}) };
  }
  return { allowed: true, decisions, governing: closestToExhaustion(decisions), ...(withEnforced ? { enforced } : {}) };
}

/** The admitted limit with the smallest share of its limit left: the one a client should watch. */
export function closestToExhaustion(decisions: readonly Decision[]): number {
  let best = 0;
  for (let i = 1; i < decisions.length; i++) {
    const a = decisions[i]!;
    const b = decisions[best]!;
    if (a.remaining / Math.max(1, a.limit) < b.remaining / Math.max(1, b.limit)) best = i;
  }
  return best;
}

export type PenalizedCall = LimitCall & { readonly penalty: PenaltyConfig };

export interface PenaltyParts {
  /** One penalized limit with its box, as enforced (shadow is applied afterwards). Never rejects for a store failure. */
  one(call: PenalizedCall): Promise<Decision>;
  /** The request's other limits (none carries a box), as the engine decides them. */
  rest(calls: readonly LimitCall[]): Promise<LimitsDecision>;
  /** Gives back what an admitted penalized limit took (`decision`: its own): the request was refused by another limit. */
  refund(call: LimitCall, decision: Decision): Promise<void>;
}

export const hasPenalty = (call: LimitCall): call is PenalizedCall => call.penalty !== undefined;

export async function decideWithPenalties(calls: readonly LimitCall[], parts: PenaltyParts): Promise<LimitsDecision> {
  const boxed: number[] = [];
  const others: number[] = [];
  calls.forEach((call, i) => {
    (hasPenalty(call) ? boxed : others).push(i);
  });
  const decisions: Decision[] = calls.map(notConsulted);
  const consulted = calls.map(() => false);
  const own = await Promise.all(boxed.map((i) => parts.one(calls[i] as PenalizedCall)));
  boxed.forEach((i, k) => {
    decisions[i] = own[k]!;
    consulted[i] = true;
  });
  const admits = (i: number) => decisions[i]!.allowed || calls[i]!.rule.shadow === true;
  let admitted = boxed.every(admits);
  if (admitted && others.length > 0) {
    const rest = await parts.rest(others.map((i) => calls[i]!));
    const enforced = rest.enforced ?? rest.decisions;
    others.forEach((i, j) => {
      decisions[i] = enforced[j]!;
      consulted[i] = rest.consulted?.[j] ?? true;
    });
    admitted = rest.allowed;
  }
  if (!admitted) await giveBack(calls, boxed, decisions, parts);
  const reply: GroupReply = { admitted, decisions, ...(consulted.every(Boolean) ? {} : { consulted }) };
  return limitsDecision(calls, reply);
}

/** A refused request's penalized limits that took their cost give it back; each reports the units returned. */
async function giveBack(calls: readonly LimitCall[], boxed: readonly number[], decisions: Decision[], parts: PenaltyParts): Promise<void> {
  const charged = boxed.filter((i) => decisions[i]!.allowed && calls[i]!.cost > 0);
  // A refund that fails leaves the units taken until the bucket refills: never over-admits.
  await Promise.all(charged.map((i) => parts.refund(calls[i]!, decisions[i]!).catch(() => undefined)));
  for (const i of charged) {
    const decision = decisions[i]!;
    decisions[i] = { ...decision, remaining: Math.min(decision.limit, decision.remaining + calls[i]!.cost) };
  }
}

/** A limit not consulted because a penalized one refused first: not charged, its state unknown (`consulted` says so). */
function notConsulted(call: LimitCall): Decision {
  const limit = capacityOf(call.rule);
  return { allowed: true, remaining: limit, limit, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'cache' };
}
