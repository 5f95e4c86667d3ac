// The penalty step: a request's limits when some carry a penalty box
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
import { capacityOf } from '../../core/rule.js';
import { type Call, type Decide, hasPenalty, type Reply, type Step } from './compose.js';

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
