// The steps nearest the store, in the order a decision flows:
//
//   refund    a refused request gives back what the store's admitting groups
//             took (reserve-and-refund: limits of different groups cannot share
//             one atomic call); those buckets are forgotten by the negative cache
//   fallback  the calls whose store call failed (`missed` below it) decided by
//             their rules' onStoreDown (StoreDown, fallback/fallback.ts):
//             `closed` refuses, `open` admits, `fallback` decides on the local
//             limiter; a lone call takes its single decision, several are
//             decided all or nothing (FallbackLimiter.decideAll) and charged
//             locally only when nothing else refused; a call that missed its
//             deadline still runs in Redis, and its late reply is reconciled
//             with what the request was told
//   groups    the calls one store call can decide together (Store.groups: one
//             per hash slot on Redis), each group sent on its own, in parallel
//   store     the terminal: one group's call under the guard (breaker and
//             deadline); its reply remembered by the fallback; a failure
//             handed up as `missed` for the fallback step to decide
//
// A lone call passes refund and groups untouched.
import type { Decision } from '../../core/decision.js';
import type { GroupReply, StoreCall } from '../../stores/store.js';
import { isDeadlineError } from '../deadline/deadline.js';
import type { Sent, StoreGuard } from '../deadline/guard.js';
import type { DebtCollector } from '../fallback/debt-collector.js';
import type { FallbackLimiter, LocalCall, StoreDown } from '../fallback/fallback.js';
import type { LateReplies } from '../fallback/late-replies.js';
import type { ChainStats } from '../metrics/stats.js';
import { type Call, type Decide, isShadow, type Missed, type Reply, replyOfOne, type Step } from './compose.js';
import type { NegativeCache } from './negative-cache.js';

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

export interface FallbackStepOptions {
  storeDown: StoreDown;
  fallback: FallbackLimiter;
  guard: Pick<StoreGuard, 'closed'>;
  debts: Pick<DebtCollector, 'owe'>;
  late: Pick<LateReplies, 'watchAll'>;
  stats: Pick<ChainStats, 'noteFailure'>;
}

export function fallbackStep(o: FallbackStepOptions): Step {
  return (next) => (calls) =>
    next(calls).then((reply) => {
      if (reply.missed === undefined) return reply;
      return calls.length === 1 ? one(o, calls[0]!, reply.missed[0]!) : several(o, calls, reply, reply.missed);
    });
}

function one(o: FallbackStepOptions, call: Call, missed: Missed): Reply {
  const { plan, cost } = call;
  const late = missed.lateOne;
  const decision = o.storeDown.degraded(plan, cost, missed.error, late ? { place: missed.places?.[0] } : undefined);
  if (late) o.storeDown.reconcileLater(plan, cost, decision, late, missed.sentAt);
  return replyOfOne(call, decision);
}

async function several(o: FallbackStepOptions, calls: readonly Call[], reply: Reply, missed: readonly Missed[]): Promise<Reply> {
  for (const miss of missed) o.stats.noteFailure(miss.error);
  const failed = missed.flatMap((miss) => miss.indexes);
  const lateOnes = new Map(missed.flatMap((miss) => (hasLateReply(miss) ? miss.indexes.map((i, k) => [i, miss.places?.[k]] as const) : [])));
  const local = await decideLocally(o, calls, failed, !reply.admitted, lateOnes);
  const decisions = reply.decisions.slice();
  failed.forEach((i, k) => {
    decisions[i] = local.decisions[k]!;
  });
  const merged: Reply = { admitted: reply.admitted && local.admitted, decisions, ...(reply.taken ? { taken: reply.taken } : {}) };
  for (const miss of missed) if (hasLateReply(miss)) reconcileLater(o, calls, miss, merged);
  return merged;
}

const hasLateReply = (miss: Missed): boolean => miss.lateOne !== undefined || miss.lateGroup !== undefined;

/**
 * The failed calls (`indexes`), decided without the store: `closed` refuses,
 * `open` admits, `fallback` on the local limiter, charged only when nothing
 * else refused (the store's groups: `refused`). A late call's own units are
 * not pending for it: its reply is reconciled.
 */
async function decideLocally(o: FallbackStepOptions, calls: readonly Call[], indexes: readonly number[], refused: boolean, late: ReadonlyMap<number, number | undefined>): Promise<GroupReply> {
  const { storeDown, fallback, guard } = o;
  const decisions: Decision[] = indexes.map((i) => storeDown.storeDownDecision(calls[i]!.plan) as Decision);
  const onLimiter = indexes.map((_, k) => (decisions[k] === undefined ? k : -1)).filter((k) => k >= 0);
  const closed = decisions.some((decision, k) => decision?.allowed === false && !isShadow(calls[indexes[k]!]!));
  const localCalls = onLimiter.map((k): LocalCall => {
    const i = indexes[k]!;
    const { plan, cost } = calls[i]!;
    const place = late.get(i);
    return { key: plan.baseKey, rule: storeDown.fallbackRule(plan), cost, shadow: isShadow(calls[i]!), pendingMs: storeDown.pendingMs(plan, place), pendingUnits: storeDown.pendingUnits(plan, place), late: late.has(i) };
  });
  if (refused || closed) {
    const peeks = await Promise.all(localCalls.map((call) => fallback.peek(call.key, call.rule)));
    onLimiter.forEach((k, j) => {
      decisions[k] = { ...peeks[j]!, allowed: true, retryAfterMs: 0 };
    });
    return { admitted: false, decisions };
  }
  const reply = fallback.decideAll(localCalls, { breakerOpen: !guard.closed });
  onLimiter.forEach((k, j) => {
    decisions[k] = reply.decisions[j]!;
  });
  // The breaker closed, a call that failed (not late) never ran: owed like the open breaker's; a late one is reconciled.
  if (reply.admitted) {
    const reconciled = guard.closed ? late : new Map<number, number | undefined>();
    onLimiter.forEach((k, j) => {
      const i = indexes[k]!;
      if (reply.decisions[j]!.allowed && !reconciled.has(i)) owe(o, calls[i]!);
    });
  }
  return { admitted: decisions.every((decision, k) => decision.allowed || isShadow(calls[indexes[k]!]!)), decisions };
}

function owe(o: FallbackStepOptions, { plan, cost }: Call): void {
  o.debts.owe(plan.bucket, plan.rule, plan.fingerprint, cost);
}

/** A group's call that came back after the deadline: each bucket corrected to what the request was told. */
function reconcileLater(o: FallbackStepOptions, calls: readonly Call[], miss: Missed, reply: Reply): void {
  const group = miss.indexes;
  const late = miss.lateGroup ?? miss.lateOne!.then((decision) => replyOfOne(calls[group[0]!]!, decision));
  const charged = group.map((i) => reply.admitted && reply.decisions[i]!.allowed);
  const delays = group.map((i) => reply.decisions[i]!.delayMs);
  const storeCalls = group.map((i) => ({ bucket: calls[i]!.plan.bucket, rule: calls[i]!.plan.rule, cost: calls[i]!.cost, shadow: isShadow(calls[i]!) }));
  o.late.watchAll(late, { baseKeys: group.map((i) => calls[i]!.plan.baseKey), calls: storeCalls, charged, delays, sentAt: miss.sentAt });
  late.then(undefined, () =>
    // The reply never came (the connection died with it): what was admitted locally is owed.
    group.forEach((i, k) => {
      if (!charged[k] || reply.decisions[i]!.source !== 'fallback') return;
      owe(o, calls[i]!);
      o.fallback.unanswered(calls[i]!.plan.baseKey, o.storeDown.fallbackRule(calls[i]!.plan), calls[i]!.cost);
    }),
  );
}
