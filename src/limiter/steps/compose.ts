// The decision chain's one signature, in the manner of undici's interceptors
// (a dispatcher's `compose`): a Decide takes a request's limits and answers
// for all of them at once (admitted only if every limit admits), and a Step
// wraps the Decide below it. Each step sees one limit or several through the
// same function, so one composition serves a lone limit and a request's many;
// each can be tested alone over a stub `next`.
import type { Decision } from '../../core/decision.js';
import type { GroupReply, Store, StoreCall } from '../../stores/store.js';
import type { Plan } from '../engine/plan.js';

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
 * (outcome.ts) is the one place a shadow limit's decision becomes an allow.
 */
export function isShadow(call: Call): boolean {
  return call.plan.original.shadow === true;
}

/** Whether a call's limit carries a penalty box (its plan says so): decided alone, first (penalty-step.ts). */
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
