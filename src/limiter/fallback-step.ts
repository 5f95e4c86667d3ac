// The fallback part of the decision chain: a store call that fails (breaker
// open, deadline missed, an error) becomes a decision by the rule's
// `onStoreDown`: the local fallback limiter with 1/N of the limit (default),
// `open` or `closed`. Also where the store's answers are remembered (the
// fallback seeds its buckets from them), where an outage's debts are paid
// before a key reaches Redis again, and where a late reply is handed to its
// reconciliation.
import type { Decision } from '../core/decision.js';
import type { Rule } from '../core/rule.js';
import type { LeaseReply } from '../stores/store.js';
import type { DebtCollector } from './debt-collector.js';
import { isDeadlineError } from './deadline.js';
import type { FallbackLimiter } from './fallback-limiter.js';
import type { Sent, StoreGuard } from './guard.js';
import type { InstanceCount } from './instances.js';
import type { LateReplies } from './late-replies.js';
import { type Plan, storeDownDecision } from './plan.js';
import { scaleRule, unitMsOf } from './scale-rule.js';
import type { ChainStats } from './stats.js';

export interface FallbackStepOptions {
  guard: StoreGuard;
  fallback: FallbackLimiter;
  debts: DebtCollector;
  late: LateReplies;
  stats: ChainStats;
  instances: InstanceCount;
  /** What a `closed` rule's refusal tells the client to wait: the breaker's time to its next probe. */
  retryAfterMs: number;
}

export class FallbackStep {
  constructor(private readonly options: FallbackStepOptions) {}

  async decide(plan: Plan, cost: number): Promise<Decision> {
    const { guard, fallback, debts } = this.options;
    const paying = guard.opened ? undefined : debts.pay(plan.bucket.key);
    if (paying !== undefined) await paying;
    const sent: Sent<Decision> = {};
    try {
      const decision = await guard.consume(plan, cost, sent);
      this.options.late.restore(plan.bucket, plan.rule, fallback.remember(plan.baseKey, plan.bucket.key, plan.rule, decision, decision.allowed ? cost : 0));
      return decision;
    } catch (error) {
      const late = sent.call !== undefined && isDeadlineError(error);
      const decision = this.degraded(plan, cost, error, late, sent.places?.[0]);
      if (late) this.reconcileLater(plan, cost, decision, sent.call!, sent.at);
      return decision;
    }
  }

  async peek(plan: Plan): Promise<Decision> {
    try {
      return await this.options.guard.peek(plan);
    } catch (error) {
      return this.whenDown(plan, error, (rule) => this.options.fallback.peek(plan.baseKey, rule));
    }
  }

  /** A lease through the guard; its reply is remembered. Rejects when the store is down (see `degraded`). */
  async lease(plan: Plan, need: number, want: number): Promise<LeaseReply> {
    const reply = await this.options.guard.lease(plan, need, want);
    this.options.late.restore(plan.bucket, plan.rule, this.options.fallback.remember(plan.baseKey, plan.bucket.key, plan.rule, reply, reply.granted));
    return reply;
  }

  /**
   * The decision when the store failed. `late`: this request's own call is
   * still running in Redis; its units are not pending for this decision, since
   * its reply is reconciled with it (late-replies.ts), and `place` (its place
   * among the units in flight) says which calls Redis runs before it: those
   * stay pending until Redis answers them, so a burst whose deadlines all fire
   * at once is neither admitted again locally nor each request held behind
   * the whole burst (a shaped request keeps its place in the queue).
   */
  degraded(plan: Plan, cost: number, error: unknown, late = false, place?: number): Decision {
    return this.whenDown(plan, error, (rule) => {
      const { guard, fallback, debts } = this.options;
      const breakerOpen = !guard.closed;
      const ahead = late ? place : undefined;
      const decision = fallback.decide(plan.baseKey, rule, cost, breakerOpen, this.pendingMs(plan, ahead), this.pendingUnits(plan, ahead), late);
      // Charged once Redis answers: an open breaker's call never ran, nor one that failed (not timed out) with it closed.
      const mayHaveRun = late || isDeadlineError(error);
      if (decision.allowed && (breakerOpen || !mayHaveRun)) debts.owe(plan.bucket, plan.rule, plan.fingerprint, cost);
      return decision;
    });
  }

  /**
   * The units still in flight to Redis for the plan's bucket: those sent
   * before the request's own late call at `place` (InFlight.take), or all of
   * them for a request whose call is not in flight.
   */
  pendingUnits(plan: Plan, place: number | undefined): number {
    const { inFlight } = this.options.guard;
    return place === undefined ? inFlight.pending(plan.baseKey) : inFlight.aheadOf(plan.baseKey, place);
  }

  /** The refill (or leak) time of those units. */
  pendingMs(plan: Plan, place: number | undefined): number {
    const perUnitMs = unitMsOf(plan.rule);
    return perUnitMs === undefined ? 0 : this.pendingUnits(plan, place) * perUnitMs;
  }

  /** The decision of a rule whose `onStoreDown` is `open` or `closed`; undefined for `fallback` (the local limiter decides). */
  storeDownDecision(plan: Plan): Decision | undefined {
    const mode = plan.original.onStoreDown ?? 'fallback';
    return mode === 'fallback' ? undefined : storeDownDecision(mode, plan.rule, this.options.retryAfterMs);
  }

  /** This instance's part of the limit while Redis is away: 1/N, never below one unit. */
  fallbackRule(plan: Plan): Rule {
    return scaleRule(plan.regionalRule, 1 / this.options.instances.value);
  }

  /** Store-down handling, once for every call: counts the failure, then `open`, `closed` or the local decision. */
  private whenDown<T extends Decision | Promise<Decision>>(plan: Plan, error: unknown, local: (rule: Rule) => T): T | Decision {
    this.options.stats.noteFailure(error);
    const mode = plan.original.onStoreDown ?? 'fallback';
    if (mode !== 'fallback') return storeDownDecision(mode, plan.rule, this.options.retryAfterMs);
    return local(this.fallbackRule(plan));
  }

  /** Reconciles the late reply of `call` with `local`, what the fallback decided meanwhile. */
  private reconcileLater(plan: Plan, cost: number, local: Decision, call: Promise<Decision>, sentAt: number | undefined): void {
    this.options.late.watch(plan.baseKey, plan.bucket, plan.rule, cost, local, call, sentAt);
    if (local.allowed && local.source === 'fallback') {
      // No reply (the connection died with the call): whether it ran is unknown; charged, so the error is a refusal too many.
      const owe = () => {
        this.options.debts.owe(plan.bucket, plan.rule, plan.fingerprint, cost);
        this.options.fallback.unanswered(plan.baseKey, this.fallbackRule(plan), cost);
      };
      call.then(undefined, owe);
    }
  }
}
