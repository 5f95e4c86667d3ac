// The negative-cache step: a key the store refused stays refused here until
// its retry time, without a store call; the store's refusals are recorded on
// their way back up. A limit with a penalty box (policies/penalty/) has only
// its blocks remembered, briefly (BLOCK_CACHE_MS).
//
// Several limits: any (enforced) limit known refused refuses the request at
// once, the others not consulted; a shadow limit's refusal cannot refuse the
// request, so it is not looked up (a lone shadow limit is: its would-be
// refusal is what the request reports).
import type { Decision } from '../../core/decision.js';
import { capacityOf } from '../../core/rule.js';
import type { Clock } from '../../stores/clock.js';
import type { NegativeCache } from '../caches/negative-cache.js';
import type { Plan } from '../engine/plan.js';
import { type Call, isShadow, type Reply, replyOfOne, type Step } from './compose.js';

export function negativeStep(negative: NegativeCache, now: Clock): Step {
  return (next) => async (calls) => {
    const cached = knownRefused(negative, calls, now());
    if (cached) return cached;
    const reply = await next(calls);
    record(negative, calls, reply, now());
    return reply;
  };
}

function knownRefused(negative: NegativeCache, calls: readonly Call[], now: number): Reply | undefined {
  if (calls.length === 1) {
    const call = calls[0]!;
    const hit = negative.get(call.plan.bucket.key, call.plan.fingerprint, call.cost, now);
    return hit ? replyOfOne(call, hit) : undefined;
  }
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    if (isShadow(call)) continue;
    const hit = negative.get(call.plan.bucket.key, call.plan.fingerprint, call.cost, now);
    if (hit) return { admitted: false, decisions: calls.map((other, j) => (j === i ? hit : notConsulted(other.plan))), consulted: calls.map((_, j) => j === i) };
  }
  return undefined;
}

/** Only the store's own refusals: a fallback, `open` or `closed` decision says nothing of the shared bucket. */
function record(negative: NegativeCache, calls: readonly Call[], reply: Reply, now: number): void {
  for (let i = 0; i < calls.length; i++) {
    const decision = reply.decisions[i]!;
    if (decision.allowed || decision.source !== 'redis') continue;
    const { plan, cost } = calls[i]!;
    // A penalized limit's plain refusals must each reach the store, where its box counts them; its blocks are remembered.
    if (plan.penalty === undefined) negative.add(plan.bucket.key, plan.fingerprint, cost, decision, now);
    else negative.addBlock(plan.bucket.key, plan.fingerprint, decision, now);
  }
}

/** A limit not consulted because another was known refused: not charged, its state unknown (`consulted` says so). */
function notConsulted(plan: Plan): Decision {
  const limit = capacityOf(plan.rule);
  return { allowed: true, remaining: limit, limit, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'cache' };
}
