// Deciding a request's limits together.
//
// FOR NOW: the limits are decided one after the other and the first refusal
// stops the walk, so a limit decided before the refusing one keeps the units
// it took. The config still refuses several limits per route (see
// src/limits/check-limits.ts) until the atomic version replaces this one.
import type { Decision } from '../core/decision.js';
import type { Engine, LimitCall, LimitsDecision } from './engine.js';

export async function decideInOrder(engine: Engine, calls: readonly LimitCall[]): Promise<LimitsDecision> {
  if (calls.length === 0) throw new RangeError('decideAll needs at least one limit');
  const decisions: Decision[] = [];
  for (const call of calls) {
    const decision = await engine.decide(call.tag, call.name, call.rule, call.cost);
    decisions.push(decision);
    if (!decision.allowed) {
      const refused = decisions.length - 1;
      // The limits after the refusing one are not charged: what a peek sees.
      for (const rest of calls.slice(refused + 1)) decisions.push(await engine.peek(rest.tag, rest.name, rest.rule));
      return { allowed: false, decisions, governing: refused };
    }
  }
  return { allowed: true, decisions, governing: closestToExhaustion(decisions) };
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
