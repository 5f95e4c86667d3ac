// Several limits of one request through the resilience chain (the multi-limit
// twin of chain.ts's single path; leasing is bypassed: see docs/limits.md).
//
//   negative cache   any limit known refused → refused at once, no store call
//   store            one call per hash slot group, in parallel, under the guard
//                    (breaker, deadline); a refusal refunds the groups that admitted
//   fallback         a group whose call failed is decided by its rules'
//                    onStoreDown: `closed` refuses, `open` admits, `fallback`
//                    decides on the local limiter, all or nothing; a late reply
//                    is reconciled with what the request was finally told
import type { Decision } from '../../core/decision.js';
import { capacityOf } from '../../core/rule.js';
import type { Clock } from '../../stores/clock.js';
import type { GroupReply, StoreCall } from '../../stores/store.js';
import type { DebtCollector } from '../fallback/debt-collector.js';
import { isDeadlineError } from '../deadline/deadline.js';
import { mergeGroups, toRefund } from '../engine/engine.js';
import type { FallbackLimiter, LocalCall } from '../fallback/fallback.js';
import type { FallbackStep } from '../fallback/fallback.js';
import type { Sent, StoreGuard } from '../deadline/guard.js';
import type { LateReplies } from '../fallback/late-replies.js';
import type { NegativeCache } from '../caches/negative-cache.js';
import type { Plan } from '../engine/plan.js';
import type { ChainStats } from '../metrics/stats.js';

export interface MultiStepOptions {
  /** Groups the calls one store call can decide together (Store.groups: one per hash slot on Redis). */
  groups: (calls: readonly StoreCall[]) => number[][];
  guard: StoreGuard;
  fallbackStep: FallbackStep;
  fallback: FallbackLimiter;
  debts: DebtCollector;
  late: LateReplies;
  negative: NegativeCache;
  stats: ChainStats;
  now: Clock;
}

/** A group's store call: its reply, or the failure and (past the deadline) the call still running. */
interface Outcome {
  reply?: GroupReply;
  late?: Promise<GroupReply>;
  /** With `late`: each limit's place among the units in flight for its bucket (InFlight.take). */
  places?: (number | undefined)[];
  /** With `late`: when the call was sent. */
  sentAt?: number;
}

export class MultiStep {
  constructor(private readonly o: MultiStepOptions) {}

  async decide(plans: readonly Plan[], costs: readonly number[]): Promise<GroupReply> {
    const calls = plans.map((plan, i): StoreCall => ({ bucket: plan.bucket, rule: plan.rule, cost: costs[i]!, shadow: plan.original.shadow === true }));
    const cached = this.knownRefused(plans, calls);
    if (cached) return cached;
    const groups = this.o.groups(calls);
    const outcomes = await Promise.all(groups.map((group) => this.stored(group.map((i) => plans[i]!), group.map((i) => calls[i]!))));
    const stored = groups.filter((_, g) => outcomes[g]!.reply !== undefined);
    const storedReplies = outcomes.flatMap((outcome) => (outcome.reply ? [outcome.reply] : []));
    const failed = groups.filter((_, g) => outcomes[g]!.reply === undefined).flat();
    const lateOnes = new Map(groups.flatMap((group, g) => (outcomes[g]!.late === undefined ? [] : group.map((i, k) => [i, outcomes[g]!.places?.[k]] as const))));
    const refused = storedReplies.some((reply) => !reply.admitted);
    const local = failed.length > 0 ? await this.local(plans, calls, failed, refused, lateOnes) : undefined;
    const reply = mergeGroups(calls, local ? [...stored, failed] : stored, local ? [...storedReplies, local] : storedReplies);
    await this.refund(toRefund(!reply.admitted, calls, stored, storedReplies));
    groups.forEach((group, g) => {
      const late = outcomes[g]!.late;
      if (late) this.reconcileLater(plans, calls, group, reply, late, outcomes[g]!.sentAt);
    });
    return reply;
  }

  /** A limit the negative cache knows refused: the request is refused without a store call; the others are not consulted. */
  private knownRefused(plans: readonly Plan[], calls: readonly StoreCall[]): GroupReply | undefined {
    const now = this.o.now();
    for (let i = 0; i < plans.length; i++) {
      if (calls[i]!.shadow) continue;
      const hit = this.o.negative.get(plans[i]!.bucket.key, plans[i]!.fingerprint, calls[i]!.cost, now);
      if (hit) return { admitted: false, decisions: plans.map((plan, j) => (j === i ? hit : notConsulted(plan))), consulted: plans.map((_, j) => j === i) };
    }
    return undefined;
  }

  /** One slot group's call under the guard; its refusals go to the negative cache. */
  private async stored(plans: readonly Plan[], calls: readonly StoreCall[]): Promise<Outcome> {
    const { guard, debts, fallback, negative, now } = this.o;
    const paying = guard.opened ? [] : plans.map((plan) => debts.pay(plan.bucket.key)).filter((charge) => charge !== undefined);
    if (paying.length > 0) await Promise.all(paying);
    const sent: Sent<GroupReply> = {};
    try {
      const reply = await guard.consumeAll(plans, calls, sent);
      plans.forEach((plan, k) => {
        const taken = reply.admitted && reply.decisions[k]!.allowed ? calls[k]!.cost : 0;
        this.o.late.restore(plan.bucket, plan.rule, fallback.remember(plan.baseKey, plan.bucket.key, plan.rule, reply.decisions[k]!, taken));
        negative.add(plan.bucket.key, plan.fingerprint, calls[k]!.cost, reply.decisions[k]!, now());
      });
      return { reply };
    } catch (error) {
      this.o.stats.noteFailure(error);
      const late = sent.call !== undefined && isDeadlineError(error);
      return late ? { late: sent.call, places: sent.places, sentAt: sent.at } : {};
    }
  }

  /**
   * The limits of the failed groups (`indexes`), decided without the store:
   * `closed` refuses, `open` admits, `fallback` on the local limiter, charged
   * only when nothing else refused (the store's groups: `refused`). A late
   * call's own units are not pending for it: its reply is reconciled.
   */
  private async local(plans: readonly Plan[], calls: readonly StoreCall[], indexes: number[], refused: boolean, late: ReadonlyMap<number, number | undefined>): Promise<GroupReply> {
    const { fallbackStep, fallback, guard } = this.o;
    const decisions: Decision[] = indexes.map((i) => fallbackStep.storeDownDecision(plans[i]!) as Decision);
    const onLimiter = indexes.map((_, k) => (decisions[k] === undefined ? k : -1)).filter((k) => k >= 0);
    const closed = decisions.some((decision, k) => decision?.allowed === false && !calls[indexes[k]!]!.shadow);
    const localCalls = onLimiter.map((k): LocalCall => {
      const i = indexes[k]!;
      const place = late.get(i);
      const pendingMs = fallbackStep.pendingMs(plans[i]!, place);
      const pendingUnits = fallbackStep.pendingUnits(plans[i]!, place);
      return { key: plans[i]!.baseKey, rule: fallbackStep.fallbackRule(plans[i]!), cost: calls[i]!.cost, shadow: calls[i]!.shadow, pendingMs, pendingUnits, late: late.has(i) };
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
    if (reply.admitted) this.owe(plans, calls, onLimiter.map((k) => indexes[k]!), reply, guard.closed ? new Set(late.keys()) : new Set());
    return { admitted: decisions.every((decision, k) => decision.allowed || calls[indexes[k]!]!.shadow), decisions };
  }

  /** Local admissions no late reply reconciles (`reconciled`) are charged to the store once it answers. */
  private owe(plans: readonly Plan[], calls: readonly StoreCall[], indexes: number[], reply: GroupReply, reconciled: ReadonlySet<number>): void {
    indexes.forEach((i, j) => {
      if (reply.decisions[j]!.allowed && !reconciled.has(i)) this.o.debts.owe(plans[i]!.bucket, plans[i]!.rule, plans[i]!.fingerprint, calls[i]!.cost);
    });
  }

  /**
   * Gives back what a refused request's admitting groups took. A concurrent
   * request refused meanwhile (the units were reserved) left a refusal in the
   * negative cache; once refunded, the bucket is forgotten there.
   */
  private async refund(calls: readonly StoreCall[]): Promise<void> {
    await Promise.all(calls.map((call) => this.o.late.adjust(call.bucket, call.rule, -call.cost)));
    for (const call of calls) this.o.negative.forget(call.bucket.key);
  }

  /** A group's call that came back after the deadline: each bucket corrected to what the request was told. */
  private reconcileLater(plans: readonly Plan[], calls: readonly StoreCall[], group: number[], reply: GroupReply, late: Promise<GroupReply>, sentAt: number | undefined): void {
    const charged = group.map((i) => reply.admitted && reply.decisions[i]!.allowed);
    const delays = group.map((i) => reply.decisions[i]!.delayMs);
    this.o.late.watchAll(group.map((i) => plans[i]!.baseKey), group.map((i) => calls[i]!), charged, late, delays, sentAt);
    late.then(undefined, () =>
      // The reply never came (the connection died with it): what was admitted locally is owed.
      group.forEach((i, k) => {
        if (!charged[k] || reply.decisions[i]!.source !== 'fallback') return;
        this.o.debts.owe(plans[i]!.bucket, plans[i]!.rule, plans[i]!.fingerprint, calls[i]!.cost);
        this.o.fallback.unanswered(plans[i]!.baseKey, this.o.fallbackStep.fallbackRule(plans[i]!), calls[i]!.cost);
      }),
    );
  }
}

/** A limit not consulted because another was known refused: not charged, its state unknown (`consulted` says so). */
function notConsulted(plan: Plan): Decision {
  const limit = capacityOf(plan.rule);
  return { allowed: true, remaining: limit, limit, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'cache' };
}
