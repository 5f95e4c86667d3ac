// The fallback step: the calls whose store call failed (`missed` below it)
// are decided by their rules' onStoreDown (StoreDown, fallback/fallback.ts):
// `closed` refuses, `open` admits, `fallback` decides on the local limiter.
// A lone call takes the local limiter's single decision; several are decided
// all or nothing (FallbackLimiter.decideAll), and only charged locally when
// nothing else refused. A call that missed its deadline still runs in Redis:
// its late reply is reconciled with what the request was told.
import type { Decision } from '../../core/decision.js';
import type { GroupReply } from '../../stores/store.js';
import type { StoreGuard } from '../deadline/guard.js';
import type { DebtCollector } from '../fallback/debt-collector.js';
import type { FallbackLimiter, LocalCall, StoreDown } from '../fallback/fallback.js';
import type { LateReplies } from '../fallback/late-replies.js';
import type { ChainStats } from '../metrics/stats.js';
import { type Call, isShadow, type Missed, type Reply, replyOfOne, type Step } from './compose.js';

export interface FallbackStepOptions {
  storeDown: StoreDown;
  fallback: FallbackLimiter;
  guard: Pick<StoreGuard, 'closed'>;
  debts: Pick<DebtCollector, 'owe'>;
  late: Pick<LateReplies, 'watchAll'>;
  stats: Pick<ChainStats, 'noteFailure'>;
}

export function fallbackStep(o: FallbackStepOptions): Step {
  return (next) => async (calls) => {
    const reply = await next(calls);
    if (reply.missed === undefined) return reply;
    return calls.length === 1 ? one(o, calls[0]!, reply.missed[0]!) : several(o, calls, reply, reply.missed);
  };
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
  const lateOnes = new Map(missed.flatMap((miss) => (isLate(miss) ? miss.indexes.map((i, k) => [i, miss.places?.[k]] as const) : [])));
  const local = await decideLocally(o, calls, failed, !reply.admitted, lateOnes);
  const decisions = reply.decisions.slice();
  failed.forEach((i, k) => {
    decisions[i] = local.decisions[k]!;
  });
  const merged: Reply = { admitted: reply.admitted && local.admitted, decisions, ...(reply.taken ? { taken: reply.taken } : {}) };
  for (const miss of missed) if (isLate(miss)) reconcileLater(o, calls, miss, merged);
  return merged;
}

const isLate = (miss: Missed): boolean => miss.lateOne !== undefined || miss.lateGroup !== undefined;

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
