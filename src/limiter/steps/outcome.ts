// The top of every engine's decision: a request's limits (LimitCall, the
// public shape) checked and planned into calls, decided by the composed steps
// (compose.ts), and the reply made the request's outcome. The outcome is the
// one place shadow mode turns a decision into an allow: below it every step,
// the dashboard's observer and tracing's span see each limit's decision as
// enforced (a shadow limit's would-be refusal included).
import type { Decision } from '../../core/decision.js';
import { assertValidCost, checkRule, type Rule } from '../../core/rule.js';
import type { LimitCall, LimitsDecision } from '../engine/types.js';
import type { Plan } from '../engine/plan.js';
import { type Call, compose, type Decide, isShadow, type Reply, type Step } from './compose.js';

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

/** How an engine plans one limit: its bucket (key built once), the scaled rule; `penalty` set for a limit with a box. */
export type Planner = (tag: string, name: string, rule: Rule, penalty: LimitCall['penalty']) => Plan;

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
    let calls: Call[];
    try {
      calls = this.callsOf(limits);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.decideCalls(calls).then((reply) => outcomeOf(calls, reply));
  }

  /** The limits planned, each rule checked and each cost against its rule; a lone limit's errors name `rule`, several `calls.N.rule`. */
  private callsOf(limits: readonly LimitCall[]): Call[] {
    if (limits.length === 0) throw new RangeError('decideAll needs at least one limit');
    const calls: Call[] = new Array(limits.length);
    for (let i = 0; i < limits.length; i++) {
      const { tag, name, rule, cost, penalty } = limits[i]!;
      checkRule(rule, limits.length === 1 ? 'rule' : `calls.${i}.rule`);
      assertValidCost(rule, cost);
      calls[i] = { plan: this.planner(tag, name, rule, penalty), cost };
    }
    return calls;
  }
}
