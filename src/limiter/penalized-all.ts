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
//      refusal across slots is (decide-all.ts: reserve-and-refund).
//
// A refusal of a penalized limit is counted by its box (in step 1); a request
// refused by another limit counts nothing in the box.
import type { Decision } from '../core/decision.js';
import { capacityOf } from '../core/rule.js';
import type { PenaltyConfig } from '../policies/penalty/model.js';
import type { GroupReply } from '../stores/store.js';
import { limitsDecision } from './decide-all.js';
import type { LimitCall, LimitsDecision } from './engine-types.js';

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
