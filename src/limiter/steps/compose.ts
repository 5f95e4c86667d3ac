// The decision chain's one signature, in the manner of undici's interceptors
// (a dispatcher's `compose`): a Decide takes a request's limits and answers
// for all of them at once (admitted only if every limit admits), and a Step
// wraps the Decide below it. Each step sees one limit or several through the
// same function, so one composition serves a lone limit and a request's many;
// each can be tested alone over a stub `next`.
//
// The top of every engine's decision (RequestChain, below): a request's
// limits (LimitCall, the public shape) checked and planned into calls, decided
// by the composed steps, and the reply made the request's outcome. The outcome is the
// one place shadow mode turns a decision into an allow: below it every step,
// the dashboard's observer and tracing's span see each limit's decision as
// enforced (a shadow limit's would-be refusal included).
//
// The penalty step (penaltyStep, below): a request's limits when some carry a penalty box
// (policies/penalty/). A penalized limit is decided with its box in one store
// call (Store.consumePenalized), which cannot share the multi-limit script, so:
//
//   1. the penalized limits first, each alone down the chain: a blocked key is
//      refused there, and the request's other limits are not consulted (a
//      blocked request costs one store call, and is charged nowhere);
//   2. if every penalized limit admitted, the other limits, together, down the
//      same chain;
//   3. if those refuse, what the penalized limits took is given back, as a
//      refusal across slots is (reserve-and-refund, store-steps.ts).
//
// A refusal of a penalized limit is counted by its box (in step 1); a request
// refused by another limit counts nothing in the box. A lone limit, or limits
// without a box, pass untouched.
import type { Decision } from '../../core/decision.js';
import type { Bucket } from '../../core/ids.js';
import { assertValidCost, capacityOf, checkRule, type Rule } from '../../policies/rule.js';
import type { PenaltyConfig } from '../../policies/penalty/model.js';
import type { GroupReply, Store, StoreCall } from '../../stores/store.js';
import type { Plan } from '../engine/plan.js';

/**
 * One limit of a request as the engine is handed it (the library's, the
 * adapters' and the gateway's shape: a RequestLimit is one): its bucket
 * (`rl:{tag}:name`), rule, cost and box. The engine plans it once into a call
 * (Call, below: the bucket's key built, the rule scaled), which is what every
 * step below sees.
 */
export interface LimitCall {
  readonly bucket: Bucket;
  readonly rule: Rule;
  readonly cost: number;
  /** The limit's penalty box (policies/penalty/): decided with it in one store call, before the other limits (penaltyStep, below); absent = none. */
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

/**
 * One limit of a request on its way down, planned once from the LimitCall the
 * engine was handed: where it goes (the plan: bucket key built once, scaled
 * rule) and what it costs. Every step sees this shape.
 */
export interface Call {
  readonly plan: Plan;
  readonly cost: number;
}

/**
 * A group of calls whose store call failed: the fallback step decides them.
 * `late` (past the deadline, still running in Redis): the call's reply, to be
 * reconciled with what the request is told; `places`: each call's place among
 * the units in flight for its bucket (InFlight.take); `sentAt`: when it was sent.
 */
export interface Missed {
  /** The failed calls, as indexes into the calls of the reply holding this. */
  readonly indexes: readonly number[];
  readonly error: unknown;
  /** A lone call's late reply (the store's consume). */
  readonly lateOne?: Promise<Decision>;
  /** A group's late reply (the store's consumeAll). */
  readonly lateGroup?: Promise<GroupReply>;
  readonly places?: readonly (number | undefined)[];
  readonly sentAt?: number;
}

/**
 * The answer for a request's calls. Below the fallback step a reply may hold
 * `missed` calls (their decisions not yet there); above it, never.
 */
export interface Reply extends GroupReply {
  missed?: Missed[];
  /** Per call: whether the store took its cost (its group admitted it); absent = as `decisions` say. A refused request gives these back. */
  taken?: boolean[];
}

export type Decide = (calls: readonly Call[]) => Promise<Reply>;
export type Step = (next: Decide) => Decide;

/** The steps around `terminal`, the first outermost: compose(a, b)(t) is a(b(t)). */
export function compose(...steps: readonly Step[]): (terminal: Decide) => Decide {
  return (terminal) => steps.reduceRight<Decide>((next, step) => step(next), terminal);
}

/**
 * Whether a call's limit is a shadow one: counted, but never refusing the
 * request. The steps read it only for the request's admission (all or
 * nothing); each decision stays as enforced on its way up, and the outcome
 * (outcomeOf, below) is the one place a shadow limit's decision becomes an allow.
 */
export function isShadow(call: Call): boolean {
  return call.plan.original.shadow === true;
}

/** Whether a call's limit carries a penalty box (its plan says so): decided alone, first (penaltyStep, below). */
export function hasPenalty(call: Call): boolean {
  return call.plan.penalty !== undefined;
}

/** A lone call's reply: admitted unless its limit refuses (a shadow limit never does). */
export function replyOfOne(call: Call, decision: Decision): Reply {
  return { admitted: decision.allowed || isShadow(call), decisions: [decision] };
}

/** One group's store call: a lone limit takes the plain (lighter) script, several the multi-limit one. */
export function consumeGroup(store: Store, group: readonly StoreCall[]): Promise<GroupReply> {
  if (group.length > 1) return store.consumeAll(group);
  const call = group[0]!;
  return store.consume(call.bucket, call.rule, call.cost).then((decision) => ({ admitted: decision.allowed || call.shadow, decisions: [decision] }));
}

/** A shadow rule is counted but never refuses; the decision says so. */
export function applyShadow(rule: Rule, decision: Decision): Decision {
  if (!rule.shadow) return decision;
  const shadowed: Decision = { ...decision, allowed: true, retryAfterMs: 0, delayMs: 0, source: 'shadow' };
  if (!decision.allowed) shadowed.shadowRefused = true;
  return shadowed;
}

/**
 * The request's outcome: each decision with shadow applied, the enforced ones
 * beside them (`enforced`: the reply's own list, no copy), and the limit the
 * response describes.
 */
export function outcomeOf(calls: readonly Call[], reply: Reply): LimitsDecision {
  const enforced = reply.decisions;
  let decisions = enforced;
  for (let i = 0; i < calls.length; i++) {
    if (!isShadow(calls[i]!)) continue;
    if (decisions === enforced) decisions = enforced.slice();
    decisions[i] = applyShadow(calls[i]!.plan.original, enforced[i]!);
  }
  if (!reply.admitted) {
    const governing = Math.max(0, decisions.findIndex((d) => !d.allowed));
    return reply.consulted ? { allowed: false, decisions, governing, enforced, consulted: reply.consulted } : { allowed: false, decisions, governing, enforced };
  }
  return { allowed: true, decisions, governing: closestToExhaustion(decisions), enforced };
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

/** How an engine plans one limit: its bucket's key (built once, or the BucketKey handed in), the scaled rule; `penalty` set for a limit with a box. */
export type Planner = (bucket: Bucket, rule: Rule, penalty: LimitCall['penalty']) => Plan;

/**
 * The engine's chain: `base` (the engine's own steps down to its store) under
 * the steps added with `use` (the dashboard's observer, tracing's span), each
 * added one outermost. `decide` checks and plans a request's limits, runs the
 * chain, and returns the outcome.
 */
export class RequestChain {
  private readonly added: Step[] = [];
  private decideCalls: Decide;

  constructor(
    private readonly base: Decide,
    private readonly planner: Planner,
  ) {
    this.decideCalls = base;
  }

  use(step: Step): void {
    this.added.unshift(step);
    this.decideCalls = compose(...this.added)(this.base);
  }

  decide(limits: readonly LimitCall[]): Promise<LimitsDecision> {
    // A step may throw before its first promise (the steps are plain functions, not async ones): still a rejection.
    try {
      const calls = this.callsOf(limits);
      return this.decideCalls(calls).then((reply) => outcomeOf(calls, reply));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The limits planned, each rule checked and each cost against its rule; a lone limit's errors name `rule`, several `calls.N.rule`. */
  private callsOf(limits: readonly LimitCall[]): Call[] {
    if (limits.length === 0) throw new RangeError('decideAll needs at least one limit');
    const calls: Call[] = new Array(limits.length);
    for (let i = 0; i < limits.length; i++) {
      const { bucket, rule, cost, penalty } = limits[i]!;
      checkRule(rule, limits.length === 1 ? 'rule' : `calls.${i}.rule`);
      assertValidCost(rule, cost);
      calls[i] = { plan: this.planner(bucket, rule, penalty), cost };
    }
    return calls;
  }
}

/** Gives back what an admitted penalized limit took (`decision`: its own): the request was refused by another limit. */
export type RefundPenalized = (call: Call, decision: Decision) => Promise<void>;

export function penaltyStep(refund: RefundPenalized): Step {
  return (next) => (calls) => (calls.length === 1 || !calls.some(hasPenalty) ? next(calls) : penalizedFirst(next, calls, refund));
}

async function penalizedFirst(next: Decide, calls: readonly Call[], refund: RefundPenalized): Promise<Reply> {
  const boxed: number[] = [];
  const others: number[] = [];
  calls.forEach((call, i) => {
    (hasPenalty(call) ? boxed : others).push(i);
  });
  const decisions: Decision[] = calls.map(notConsulted);
  const consulted = calls.map(() => false);
  const own = await Promise.all(boxed.map((i) => next([calls[i]!])));
  boxed.forEach((i, k) => {
    decisions[i] = own[k]!.decisions[0]!;
    consulted[i] = true;
  });
  let admitted = own.every((reply) => reply.admitted);
  if (admitted && others.length > 0) {
    const rest = await next(others.map((i) => calls[i]!));
    others.forEach((i, j) => {
      decisions[i] = rest.decisions[j]!;
      consulted[i] = rest.consulted?.[j] ?? true;
    });
    admitted = rest.admitted;
  }
  if (!admitted) await giveBack(calls, boxed, decisions, refund);
  return consulted.every(Boolean) ? { admitted, decisions } : { admitted, decisions, consulted };
}

/** A refused request's penalized limits that took their cost give it back; each reports the units returned. */
async function giveBack(calls: readonly Call[], boxed: readonly number[], decisions: Decision[], refund: RefundPenalized): Promise<void> {
  const charged = boxed.filter((i) => decisions[i]!.allowed && calls[i]!.cost > 0);
  // A refund that fails leaves the units taken until the bucket refills: never over-admits.
  await Promise.all(charged.map((i) => refund(calls[i]!, decisions[i]!).catch(() => undefined)));
  for (const i of charged) {
    const decision = decisions[i]!;
    decisions[i] = { ...decision, remaining: Math.min(decision.limit, decision.remaining + calls[i]!.cost) };
  }
}

/** A limit not consulted because a penalized one refused first: not charged, its state unknown (`consulted` says so). */
function notConsulted(call: Call): Decision {
  const limit = capacityOf(call.plan.original);
  return { allowed: true, remaining: limit, limit, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'cache' };
}
