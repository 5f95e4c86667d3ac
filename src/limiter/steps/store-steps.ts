// The steps nearest the store, in the order a decision flows:
//
//   refund   a refused request gives back what the store's admitting groups
//            took (reserve-and-refund: limits of different groups cannot share
//            one atomic call); those buckets are forgotten by the negative cache
//   groups   the calls one store call can decide together (Store.groups: one
//            per hash slot on Redis), each group sent on its own, in parallel
//   store    the terminal: one group's call under the guard (breaker and
//            deadline); its reply remembered by the fallback; a failure
//            handed up as `missed` for the fallback step to decide
//
// A lone call passes refund and groups untouched.
import type { Decision } from '../../core/decision.js';
import type { GroupReply, StoreCall } from '../../stores/store.js';
import type { NegativeCache } from '../caches/negative-cache.js';
import { isDeadlineError } from '../deadline/deadline.js';
import type { Sent, StoreGuard } from '../deadline/guard.js';
import type { DebtCollector } from '../fallback/debt-collector.js';
import type { FallbackLimiter } from '../fallback/fallback.js';
import type { LateReplies } from '../fallback/late-replies.js';
import { type Call, type Decide, isShadow, type Missed, type Reply, replyOfOne, type Step } from './compose.js';

/** The store's view of planned calls: bucket, scaled rule, cost and shadow flag (the multi-limit call must not let a shadow limit refuse). */
export function storeCallsOfPlans(calls: readonly Call[]): StoreCall[] {
  return calls.map((call) => ({ bucket: call.plan.bucket, rule: call.plan.rule, cost: call.cost, shadow: isShadow(call) }));
}

/** Gives back, when the request is refused, what the store took for it (Reply.taken); each such limit reports the units returned. */
export function refundStep(o: { late: { adjust(...args: Parameters<LateReplies['adjust']>): Promise<unknown> }; negative: Pick<NegativeCache, 'forget'> }): Step {
  return (next) => (calls) => (calls.length === 1 ? next(calls) : refunded(next, calls, o));
}

async function refunded(next: Decide, calls: readonly Call[], o: Parameters<typeof refundStep>[0]): Promise<Reply> {
  const reply = await next(calls);
  const { taken } = reply;
  if (reply.admitted || taken === undefined) return reply;
  const back = calls.filter((call, i) => taken[i] && call.cost > 0);
  // A refund that fails leaves the units taken until the bucket refills: never over-admits.
  await Promise.all(back.map((call) => o.late.adjust(call.plan.bucket, call.plan.rule, -call.cost)));
  // A concurrent request refused meanwhile (the units were reserved) left a refusal in the negative cache.
  for (const call of back) o.negative.forget(call.plan.bucket.key);
  const decisions = reply.decisions.map((decision, i) => (taken[i] ? { ...decision, remaining: Math.min(decision.limit, decision.remaining + calls[i]!.cost) } : decision));
  return { ...reply, decisions };
}

/** Splits several calls into the store's groups, each sent to `next` on its own; the replies merged, a failed group's calls `missed`. */
export function groupsStep(groupsOf: (calls: readonly StoreCall[]) => number[][]): Step {
  return (next) => (calls) => (calls.length === 1 ? next(calls) : inGroups(next, calls, groupsOf(storeCallsOfPlans(calls))));
}

async function inGroups(next: Decide, calls: readonly Call[], groups: readonly number[][]): Promise<Reply> {
  const replies = await Promise.all(groups.map((group) => next(group.map((i) => calls[i]!))));
  const decisions: Decision[] = new Array(calls.length);
  const taken = calls.map(() => false);
  const missed: Missed[] = [];
  let admitted = true;
  groups.forEach((group, g) => {
    const reply = replies[g]!;
    for (const miss of reply.missed ?? []) missed.push({ ...miss, indexes: miss.indexes.map((k) => group[k]!) });
    if (!reply.admitted) admitted = false;
    group.forEach((i, k) => {
      const decision = reply.decisions[k];
      if (decision === undefined) return;
      decisions[i] = decision;
      taken[i] = reply.admitted && decision.allowed;
    });
  });
  return { admitted, decisions, taken, ...(missed.length > 0 ? { missed } : {}) };
}

export interface StoreTerminalOptions {
  guard: StoreGuard;
  debts: Pick<DebtCollector, 'pay'>;
  fallback: Pick<FallbackLimiter, 'remember'>;
  late: Pick<LateReplies, 'restore'>;
}

/**
 * One group's store call under the guard: a lone call the plain (or
 * penalized) consume, several the multi-limit one. What this instance owes the
 * buckets from an outage is paid first; every answer is remembered by the
 * fallback. A failure is no decision here: the reply says `missed` (with
 * `admitted`: no answered call refused).
 */
export function storeTerminal(o: StoreTerminalOptions): Decide {
  return (calls) => {
    const paying = o.guard.opened ? undefined : pay(o.debts, calls);
    if (paying !== undefined) return paying.then(() => send(o, calls));
    return send(o, calls);
  };
}

function pay(debts: Pick<DebtCollector, 'pay'>, calls: readonly Call[]): Promise<unknown> | undefined {
  if (calls.length === 1) return debts.pay(calls[0]!.plan.bucket.key);
  const paying = calls.map((call) => debts.pay(call.plan.bucket.key)).filter((charge) => charge !== undefined);
  return paying.length > 0 ? Promise.all(paying) : undefined;
}

function send(o: StoreTerminalOptions, calls: readonly Call[]): Promise<Reply> {
  if (calls.length === 1) return sendOne(o, calls[0]!);
  const sent: Sent<GroupReply> = {};
  return o.guard.consumeAll(calls.map((call) => call.plan), storeCallsOfPlans(calls), sent).then(
    (reply) => {
      calls.forEach(({ plan, cost }, k) => {
        const taken = reply.admitted && reply.decisions[k]!.allowed ? cost : 0;
        o.late.restore(plan.bucket, plan.rule, o.fallback.remember(plan.baseKey, plan.bucket.key, plan.rule, reply.decisions[k]!, taken));
      });
      return reply;
    },
    (error: unknown) => missedReply(calls, error, isLate(sent, error) ? { lateGroup: sent.call! } : undefined, sent),
  );
}

function sendOne(o: StoreTerminalOptions, call: Call): Promise<Reply> {
  const { plan, cost } = call;
  const sent: Sent<Decision> = {};
  return o.guard.consume(plan, cost, sent).then(
    (decision) => {
      o.late.restore(plan.bucket, plan.rule, o.fallback.remember(plan.baseKey, plan.bucket.key, plan.rule, decision, decision.allowed ? cost : 0));
      return replyOfOne(call, decision);
    },
    (error: unknown) => missedReply([call], error, isLate(sent, error) ? { lateOne: sent.call! } : undefined, sent),
  );
}

/** Past the deadline with the call sent: it still runs in Redis, and its reply is to be reconciled. */
function isLate(sent: Sent<unknown>, error: unknown): boolean {
  return sent.call !== undefined && isDeadlineError(error);
}

function missedReply(calls: readonly Call[], error: unknown, late: Pick<Missed, 'lateOne' | 'lateGroup'> | undefined, sent: Sent<unknown>): Reply {
  const miss: Missed = late === undefined ? { indexes: calls.map((_, i) => i), error } : { indexes: calls.map((_, i) => i), error, ...late, places: sent.places, sentAt: sent.at };
  return { admitted: true, decisions: [], missed: [miss] };
}
