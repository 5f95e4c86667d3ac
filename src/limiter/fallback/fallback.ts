// What a store call that fails (breaker open, deadline missed, an error)
// becomes: a decision by the rule's `onStoreDown`, the local fallback limiter
// with 1/N of the limit (default), `open` or `closed` (StoreDown, used by the
// fallback and leasing steps, steps/); a late reply handed to its
// reconciliation. The store's answers are remembered by the fallback limiter,
// which seeds its buckets from them.
//
// The local limiter (FallbackLimiter) that decides while Redis cannot: a MemoryStore tagged
// `fallback`, fed rules already divided by the number of live instances.
//
// A fresh full local bucket is only handed out once the breaker is open and the
// key was never seen. Otherwise the bucket starts from the last state Redis
// reported for the key (full for a key it never reported), minus what may still
// be taken from it: the calls in flight to Redis that run before this one
// there (guard.ts InFlight) and, while the breaker is closed, what this instance
// admitted locally that no call in flight counts. How a word is carried is the
// policy registry's `carry`: a time-based state (token bucket, GCRA, leaky
// bucket: a shaped request keeps its place in the queue, so its delay) is
// rebuilt from it; a window's count is held to its share of what was left.
// A request's own call, late, is not counted: its reply is reconciled with
// this decision (late-replies.ts), which charges an over-admission or refunds
// a false refusal.
import type { Decision } from '../../core/decision.js';
import type { Rule } from '../../policies/rule.js';
import { type Clock, systemClock } from '../../stores/clock.js';
import { MemoryStore } from '../../stores/memory-store.js';
import type { BucketInfo, GroupReply, LeaseReply } from '../../stores/store.js';
import { BoundedLru } from '../../core/lru.js';
import { isDeadlineError } from '../deadline/deadline.js';
import type { StoreGuard } from '../deadline/guard.js';
import { type Plan, scaleRule, seedState, storeDownDecision, unitMsOf } from '../engine/plan.js';
import type { ChainStats } from '../metrics/stats.js';
import type { DebtCollector } from './debt-collector.js';
import type { InstanceCount } from './instances.js';
import { LastStates, type RedisWord } from './last-states.js';
import type { LateReplies } from './late-replies.js';

export interface StoreDownOptions {
  guard: StoreGuard;
  fallback: FallbackLimiter;
  debts: DebtCollector;
  late: LateReplies;
  stats: ChainStats;
  instances: InstanceCount;
  /** What a `closed` rule's refusal tells the client to wait: the breaker's time to its next probe. */
  retryAfterMs: number;
}

export class StoreDown {
  constructor(private readonly options: StoreDownOptions) {}

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
   * The decision when the store failed. `late` (given): this request's own call
   * is still running in Redis; its units are not pending for this decision, since
   * its reply is reconciled with it (late-replies.ts), and `late.place` (its place
   * among the units in flight) says which calls Redis runs before it: those
   * stay pending until Redis answers them, so a burst whose deadlines all fire
   * at once is neither admitted again locally nor each request held behind
   * the whole burst (a shaped request keeps its place in the queue).
   */
  degraded(plan: Plan, cost: number, error: unknown, late?: LateCall): Decision {
    return this.whenDown(plan, error, (rule) => {
      const { guard, fallback, debts } = this.options;
      const breakerOpen = !guard.closed;
      const ahead = late?.place;
      const call: LocalCall = { key: plan.baseKey, rule, cost, shadow: false, pendingMs: this.pendingMs(plan, ahead), pendingUnits: this.pendingUnits(plan, ahead), late: late !== undefined };
      const decision = fallback.decide(call, { breakerOpen });
      // Charged once Redis answers: an open breaker's call never ran, nor one that failed (not timed out) with it closed.
      const mayHaveRun = late !== undefined || isDeadlineError(error);
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
  reconcileLater(plan: Plan, cost: number, local: Decision, call: Promise<Decision>, sentAt: number | undefined): void {
    this.options.late.watch({ baseKey: plan.baseKey, bucket: plan.bucket, rule: plan.rule, cost }, local, call, sentAt);
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

/** A request whose own store call is late (still running in Redis): its place among the units in flight for its bucket (InFlight.take). */
export interface LateCall {
  place: number | undefined;
}

/**
 * One limit decided locally: what it adds to the plan is this instance's
 * rule (the limit divided by the live instances) and what is still in flight
 * to Redis for its key; the key is the whole bucket's (plan.baseKey).
 */
export interface LocalCall {
  key: string;
  rule: Rule;
  cost: number;
  /** A shadow limit: decideAll never refuses it for its window share, nor lets it refuse the others. */
  shadow: boolean;
  /** The refill time of the units still in flight to Redis for this key (they may yet be taken there). */
  pendingMs: number;
  /** The units still in flight to Redis ahead of it (a window policy's share is held below them). */
  pendingUnits?: number;
  /** Its own call is late: its reply is reconciled with this decision. */
  late?: boolean;
}

/** Whether the breaker is open (Redis considered down) as the fallback decides. */
export interface BreakerState {
  breakerOpen: boolean;
}

export interface FallbackLimiterOptions {
  /** Most buckets the fallback store keeps. */
  maxKeys: number;
  /** Most last-known Redis states kept for seeding. */
  stateCacheSize: number;
  /** Whether this instance still owes bucket `key` units its fallback admitted (owed, or their charge in flight: debt-collector.ts). */
  owes?: (key: string) => boolean;
  now?: Clock;
}

export class FallbackLimiter {
  private readonly store: MemoryStore;
  private readonly lastStates: LastStates;
  /** Keys whose local bucket runs on its own during this breaker-open episode. */
  private readonly started: BoundedLru<string, true>;
  /** Local time until which this instance's local admissions (closed breaker) still weigh on the bucket. */
  private readonly debtUntil: BoundedLru<string, number>;
  private readonly now: Clock;
  private readonly owes: (key: string) => boolean;

  constructor(options: FallbackLimiterOptions) {
    this.now = options.now ?? systemClock;
    this.owes = options.owes ?? (() => false);
    this.store = new MemoryStore({ maxKeys: options.maxKeys, now: this.now, source: 'fallback' });
    this.lastStates = new LastStates(options.stateCacheSize);
    this.started = new BoundedLru(options.maxKeys);
    this.debtUntil = new BoundedLru(options.stateCacheSize);
  }

  /**
   * Records what Redis just said about `key` under `redisRule` (called on every
   * Redis reply; `bucket`: the shard it is about; `taken`: the units the reply
   * took). Returns the units the bucket lost since this instance's last word
   * before the breaker opened (last-states.ts), which the caller charges back;
   * almost always 0.
   */
  remember(key: string, bucket: string, redisRule: Rule, word: RedisWord, taken: number): number {
    // A word said while this instance still owes the bucket does not hold those units (a call queued through a reconnect, a probe).
    return this.lastStates.remember(key, { bucket, rule: redisRule, word, taken, now: this.now() }, !this.owes(bucket));
  }

  /** Whether the last word on bucket `key` predates the breaker's last opening (see remember). */
  suspect(key: string): boolean {
    return this.lastStates.suspect(this.lastStates.peek(key), key);
  }

  /**
   * A peek at bucket `key` before this instance charges what it admitted
   * locally (debt-collector.ts): the units the bucket lost against the last
   * word, counting none of this instance's admissions since (not in Redis yet).
   * The peek becomes the last word, with the `charging` units and the lost
   * ones (about to be taken) already counted against it.
   */
  lostBeforeCharge(key: string, redisRule: Rule, word: RedisWord, charging: number): number {
    const lost = this.lastStates.remember(key, { bucket: key, rule: redisRule, word, taken: 0, now: this.now() }, false);
    this.lastStates.holdLocal(key, charging);
    return lost;
  }

  /**
   * Decides one limit locally with `call.rule` (this instance's part of the limit).
   */
  decide(call: LocalCall, { breakerOpen }: BreakerState): Decision {
    const now = this.now();
    const { key, rule, cost } = call;
    const capped = this.windowRefusal(key, rule, cost + (call.pendingUnits ?? 0), now);
    if (capped !== undefined) return capped;
    this.prepare(key, rule, breakerOpen, call.pendingMs, now);
    const decision = this.store.consumeSync(key, rule, cost, now);
    if (decision.allowed) this.noteLocalAdmission(call, now, breakerOpen);
    return decision;
  }

  /** Several limits decided locally as one (policies/compose.ts): every local bucket charged, or none. */
  decideAll(calls: readonly LocalCall[], { breakerOpen }: BreakerState): GroupReply {
    const now = this.now();
    const capped = calls.map((call) => (call.shadow ? undefined : this.windowRefusal(call.key, call.rule, call.cost + (call.pendingUnits ?? 0), now)));
    if (capped.some((decision) => decision !== undefined)) {
      return { admitted: false, decisions: calls.map((call, i) => capped[i] ?? this.store.peekSync(call.key, call.rule)), consulted: calls.map(() => true) };
    }
    for (const call of calls) this.prepare(call.key, call.rule, breakerOpen, call.pendingMs, now);
    const reply = this.store.consumeAllSync(calls, now);
    if (reply.admitted) {
      calls.forEach((call, i) => {
        if (reply.decisions[i]!.allowed) this.noteLocalAdmission(call, now, breakerOpen);
      });
    }
    return reply;
  }

  /**
   * Redis still serves other calls (breaker closed): re-derive the bucket from
   * its latest word every time (a key it never reported starts full); the late
   * reply is reconciled with what this decides. Breaker open: an unknown key
   * gets a fresh bucket of 1/N of the limit, less what is in flight, once per episode.
   */
  private prepare(key: string, rule: Rule, breakerOpen: boolean, pendingMs: number, now: number): void {
    if (!breakerOpen) {
      this.seed(key, rule, pendingMs, now);
      return;
    }
    if (this.started.get(key) === undefined) {
      this.seed(key, rule, pendingMs, now);
      this.started.set(key, true);
    }
  }

  /**
   * A window policy's local share of what Redis last said was left (1/N of
   * it, less what this instance admitted since): refused past it, until that
   * window has passed. `need`: the request's cost and the units still in
   * flight (Redis may yet take them). Undefined: the local bucket decides.
   */
  private windowRefusal(key: string, rule: Rule, need: number, now: number): Decision | undefined {
    if (unitMsOf(rule) !== undefined) return undefined;
    const share = this.lastStates.windowShare(key, rule, now);
    if (share === undefined || share.left >= need) return undefined;
    const waitMs = Math.ceil(share.untilMs - now);
    const limit = 'limit' in rule ? rule.limit : 0;
    return { allowed: false, remaining: Math.max(0, share.left), limit, resetAfterMs: waitMs, retryAfterMs: waitMs, delayMs: 0, source: 'fallback' };
  }

  /**
   * Counted against the last word, unless `late`: its call is still in
   * flight, so Redis counts it (see unanswered), and later decisions count it
   * among the units in flight ahead of theirs. Otherwise, while the breaker is
   * closed, it weighs on the local bucket until the debt collector charges it
   * (the debt's time runs out as the bucket refills meanwhile).
   */
  private noteLocalAdmission({ key, rule, cost, late }: LocalCall, now: number, breakerOpen: boolean): void {
    if (late) return;
    this.lastStates.noteLocal(key, cost);
    if (!breakerOpen) this.weigh(key, rule, cost, now);
  }

  /** `cost` units admitted locally weigh on the bucket of `key`, as a debt of their refill time. */
  private weigh(key: string, rule: Rule, cost: number, now: number): void {
    const perUnitMs = unitMsOf(rule);
    if (perUnitMs === undefined) return;
    this.debtUntil.set(key, Math.max(this.debtUntil.peek(key) ?? now, now) + cost * perUnitMs);
  }

  /**
   * The late call of a local admission failed without a reply: whether it ran
   * is unknown, it is owed (charged once Redis answers), and the admission now
   * counts against the last word and weighs on the local bucket.
   */
  unanswered(key: string, rule: Rule, cost: number): void {
    this.lastStates.noteLocal(key, cost);
    this.weigh(key, rule, cost, this.now());
  }

  async peek(key: string, rule: Rule): Promise<Decision> {
    return this.store.peekSync(key, rule);
  }

  async inspect(key: string, rule: Rule): Promise<BucketInfo> {
    return this.store.inspectSync(key, rule);
  }

  /** The breaker opened: the next reply of each key is held to this instance's last word (last-states.ts). */
  beginEpisode(): void {
    this.lastStates.beginEpisode();
  }

  /** The breaker closed: Redis is authoritative again; the next episode re-seeds from it. */
  endEpisode(): void {
    this.started.clear();
  }

  /** Entries kept per structure, each bounded (maxKeys or stateCacheSize) whatever the number of keys seen. */
  sizes(): { buckets: number; lastStates: number; started: number; debts: number } {
    return { buckets: this.store.size, lastStates: this.lastStates.size, started: this.started.size, debts: this.debtUntil.size };
  }

  forget(key: string): void {
    this.lastStates.delete(key);
    this.started.delete(key);
    this.debtUntil.delete(key);
    this.store.forget(key);
  }

  close(): Promise<void> {
    this.lastStates.clear();
    this.started.clear();
    this.debtUntil.clear();
    return this.store.close();
  }

  /**
   * Seeds the local bucket of a time-based policy from Redis's last word, or
   * full for a key it never reported (seeded all the same: the store may still
   * hold an older local state of the key), less what is in flight and owed.
   */
  private seed(key: string, rule: Rule, pendingMs: number, now: number): void {
    if (unitMsOf(rule) === undefined) return;
    const known = this.lastStates.peek(key);
    const last = known?.rule.policy === rule.policy ? known : undefined;
    // Deficit times are the same for the global and the 1/N bucket (plan.ts scaleRule), so they add up.
    const debtMs = Math.max(0, (this.debtUntil.peek(key) ?? now) - now);
    const redisMs = last === undefined ? 0 : Math.max(0, last.at + last.resetAfterMs - now);
    const resetAfterMs = redisMs + pendingMs + debtMs;
    const state = seedState(rule, now, resetAfterMs);
    this.store.seed(key, rule, state, Math.max(1, resetAfterMs), now);
  }
}
