// The per-call deadline. A call fails when its connection has delivered nothing
// for `deadlineMs` since the call started (the store's connection watch). The
// timer that judges it (DeadlineTimer, below) defers its verdict past the poll
// phase, so a late timer never beats a reply that has arrived, and time spent
// processing replies is never counted as silence.
//
// A store call has two deadlines: the request's, and the breaker's (the
// silence that counts as a failure, never shorter). A guard's calls share one
// timer (a timer per call cost a setTimeout and a clearTimeout per request).
// Shared, the timer still judges each call as a timer of its own would: a call
// is judged only once its own due has come, and it counts as judged late (this
// process busy) only by how late its own due was met, so a burst's later calls
// are not marked busy early by the first call's late firing.
//
// DeadlineTimer is armed for the earliest due, fired, then its verdict
// deferred by two setImmediate hops (the first lets the poll phase read what
// sits in the socket buffer, the second lets the connection watch stamp the
// end of processing it).
//
// AdaptiveDeadline, below: the deadline of a Redis call when the operator sets none: derived from how
// long Redis has kept calls waiting lately, in the spirit of TCP's
// retransmission timeout. Its sample is the silence an answered call saw (from
// when it was sent, or the connection's previous answer if later, to its own
// answer), the quantity the deadline judges (above). The deadline is
// `factor` times the longest such silence in the last `windowMs`, clamped to
// [floorMs, ceilingMs]: on loopback it stays at the floor (an outage still
// falls back that soon), across zones whose round trips spike it rises above
// the spikes, so a spike is waited for instead of decided by the fallback.
//
// Only answers feed it: a call that failed, or that stayed silent past the
// breaker's silence (an outage, the breaker's job), is no sample, nor is a
// silence past the ceiling: the deadline never waits longer than the ceiling,
// however long Redis is silent. A reply after the deadline is a sample (the
// spike it measures is what the deadline must learn). Pure: fed samples and
// times, it reads no clock of its own.
import { performance as nodePerformance } from 'node:perf_hooks';
import type { Clock } from '../../stores/clock.js';
import type { StoreConnection } from '../../stores/store.js';

export class DeadlineError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(deadlineMs: number) {
    super(`Redis sent nothing for ${deadlineMs} ms`);
    this.name = 'DeadlineError';
  }
}

export function isDeadlineError(error: unknown): error is DeadlineError {
  return error instanceof DeadlineError;
}

/** What a deadline does once its call's channel was silent for it: a promise's reject, or a callback (watch). */
export type OnSilent = (error: DeadlineError) => void;

/** One deadline of a call (watch): its slot among the call's two. */
export type Bound = 0 | 1;

/** How long this process's event loop has waited for events, in all, ms (a field read, cheap enough for every call). */
const loopIdleMs = () => nodePerformance.nodeTiming.idleTime;

/** The clock a call's deadlines read, and the timer that judges them (one of their own when none is given): a guard hands every call the same. */
export interface CallClock {
  readonly now: Clock;
  readonly timer?: DeadlineTimer;
}

/**
 * The deadlines of one call started now, judged by a shared timer (one of its
 * own when none is given). `bound` resolves as the call does, or rejects with
 * DeadlineError once the channel has been silent for its `ms`; `watch` calls
 * back instead of rejecting. A late reply is dropped, never unhandled.
 */
export class CallDeadlines implements JudgedCall {
  /** When the call started (the clock given). */
  readonly started: number;
  // A call has two deadlines at most, the request's and the breaker's: kept in two
  // slots, not a list of objects, so a call allocates nothing for them.
  private ms0 = 0;
  private ms1 = 0;
  /** Each slot's callback; undefined when the slot is free or settled. */
  private onSilent0: OnSilent | undefined;
  private onSilent1: OnSilent | undefined;
  /** Slots handed out so far (watch). */
  private watched = 0;
  /** Deadlines watched and not settled yet. */
  private open = 0;
  /** Set once, by the first late timer: the silence counts from then. */
  private busyFrom: number | undefined;

  /** When the timer fired, until its verdict: a reply read in between (the poll phase comes first) sat in the socket. */
  private firedAt: number | undefined;
  /** When a timer of this call's own would fire next (the clock given): before it, a shared timer's firing leaves the call alone. */
  private dueAt = Number.POSITIVE_INFINITY;
  /** The event loop's idle total when the call started. */
  private readonly idleAtStart: number;

  /**
   * Since when an answer's silence counts for the adaptive deadline's sample:
   * the start, or the first late timer (this process was busy until then), or
   * a timer that fired and whose verdict has not run yet. An answer read there
   * was waiting while this process was busy past the due (a GC pause, a
   * short stall too), not while Redis was silent: counted, such stalls lift
   * the adaptive deadline for a long while with no fault in Redis.
   */
  get judgedFrom(): number {
    return Math.max(this.started, this.busyFrom ?? this.started, this.firedAt ?? this.started);
  }

  private readonly now: Clock;
  private readonly timer: DeadlineTimer;

  /** `firstMs`: the shortest deadline that will be bound (the timer's first due); `started`: when the call started, if the caller read the clock already. */
  constructor(
    private readonly watcher: StoreConnection,
    readonly channel: string,
    private readonly firstMs: number,
    clock: CallClock,
    started = clock.now(),
  ) {
    this.now = clock.now;
    this.timer = clock.timer ?? new DeadlineTimer(clock.now);
    this.started = started;
    this.idleAtStart = loopIdleMs();
  }

  /**
   * How long the event loop waited for events since the call started: what
   * Redis's silence can have been at most. Once the reply has arrived the loop
   * never waits (its socket is readable), so a stall of this process, however
   * short (a GC pause, a burst of requests, code compiled), is not in it.
   */
  idleSinceStart(): number {
    return loopIdleMs() - this.idleAtStart;
  }

  bound<T>(call: Promise<T>, ms: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const bound = this.watch(ms, reject);
      call.then(
        (value) => {
          if (this.settle(bound)) resolve(value);
        },
        (error: unknown) => {
          if (this.settle(bound)) reject(error);
        },
      );
    });
  }

  /** A deadline without a promise: `onSilent` runs once the channel is silent for `ms`, unless settle(bound) came first. At most two per call. */
  watch(ms: number, onSilent: OnSilent): Bound {
    if (this.watched === 2) throw new RangeError('a call has two deadlines at most');
    if (this.open === 0) {
      // The first bound is watched as the call starts (no due yet): its due counts from `started`, without a clock read.
      // Later ones read the clock once; the shared timer, usually armed already, reads none.
      const at = this.dueAt === Number.POSITIVE_INFINITY ? this.started : this.now();
      this.dueAt = Math.max(at, this.started + Math.min(ms, this.firstMs));
      this.timer.add(this, this.dueAt);
    }
    this.open++;
    if (this.watched++ === 0) {
      this.ms0 = ms;
      this.onSilent0 = onSilent;
      return 0;
    }
    this.ms1 = ms;
    this.onSilent1 = onSilent;
    return 1;
  }

  /** Marks `bound` settled; false if its deadline came first. */
  settle(bound: Bound): boolean {
    if (bound === 0) {
      if (this.onSilent0 === undefined) return false;
      this.onSilent0 = undefined;
    } else {
      if (this.onSilent1 === undefined) return false;
      this.onSilent1 = undefined;
    }
    if (--this.open === 0) this.timer.remove(this);
    return true;
  }

  /** The timer judging this call fired at `at`; its verdict comes after the poll phase. A call not yet due is not judged then. */
  noteFired(at: number): void {
    if (at >= this.dueAt) this.firedAt = at;
  }

  /**
   * Rejects each bound silent for its `ms` at `at`; the ms until the next due,
   * or Infinity when none is left; a call that was not due when the timer
   * fired is left alone (the timer comes back for it). `firing`: if the timer
   * met this call's own due LATE_MS or more late, this process was busy (a
   * burst of calls issued in one turn leaves the socket only when the turn
   * ends, and Redis answers it after that): once per call, the silence then
   * counts from `at` (the verdict), not from before Redis could even read the call.
   */
  verdict(at: number, firing?: Firing): number {
    // Not due when the timer fired (added during the hops, or due later): its own timer would fire now, late, or later.
    if (this.firedAt === undefined) return Math.max(0, this.dueAt - at);
    this.firedAt = undefined;
    if (firing !== undefined && this.busyFrom === undefined && firing.lateBy + (firing.due - this.dueAt) >= LATE_MS) this.busyFrom = at;
    const silentSince = Math.max(this.started, this.busyFrom ?? this.started, this.watcher.lastDataAt(this.channel));
    const next = Math.min(this.judge(0, at, silentSince), this.judge(1, at, silentSince));
    if (this.open === 0) return Number.POSITIVE_INFINITY;
    this.dueAt = at + next;
    return next;
  }

  /** Rejects `bound` if silent for its ms at `at` (silent since `silentSince`); else the ms until its due (Infinity: settled, or never watched). */
  private judge(bound: Bound, at: number, silentSince: number): number {
    const onSilent = bound === 0 ? this.onSilent0 : this.onSilent1;
    if (onSilent === undefined) return Number.POSITIVE_INFINITY;
    const ms = bound === 0 ? this.ms0 : this.ms1;
    const due = silentSince + ms;
    // Bytes arrived meanwhile, or a longer deadline: Redis is alive, the reply is queued behind others.
    if (at < due) return due - at;
    this.settle(bound);
    onSilent(new DeadlineError(ms));
    return Number.POSITIVE_INFINITY;
  }
}

/** How a timer's firing went: how late it fired (the monotonic clock, ms) for the due it was armed for (the clock given). */
export interface Firing {
  lateBy: number;
  due: number;
}

/** A timer this much past its due says the event loop was blocked (timers are otherwise within a millisecond). */
const LATE_MS = 2;

const performanceNow = () => performance.now();

/** What the timer judges: one call's deadlines (CallDeadlines). */
export interface JudgedCall {
  /** The timer fired at `at`; its verdict comes after the poll phase. */
  noteFired(at: number): void;
  /** Rejects each bound silent at `at`; the ms until the next due, or Infinity when none is left. */
  verdict(at: number, firing?: Firing): number;
}

/**
 * The timer of one call's deadlines (a call on its own, CallDeadlines' default)
 * or of many (a guard's calls): armed for the earliest due. A timer of one call
 * stops when its call is answered; a guard's (`keepArmed`) stays armed with
 * nothing left to judge and fires into an empty verdict, so a lone call after
 * another finds it armed early enough and arms nothing: a paced load's calls,
 * each answered before the next starts, arm a timer about once per deadline,
 * not once each. The usual single call is kept in a field, not a Set.
 */
export class DeadlineTimer {
  /** The first call judged; more (a shared timer) go in `others`. */
  private first: JudgedCall | undefined;
  private others: Set<JudgedCall> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  /** performance.now() when the armed timer is due. */
  private firesAt = 0;
  /** The firing awaiting its verdict: each call judged counts as late by its own due (CallDeadlines.verdict). */
  private firing: Firing | undefined;

  /**
   * `monotonic`: the clock that says whether this process was busy (a test on a manual `now` gives one that never lags).
   * `keepArmed`: the timer stays armed when nothing is left to judge (a guard's shared timer).
   */
  constructor(
    private readonly now: Clock,
    private readonly monotonic: () => number = performanceNow,
    private readonly keepArmed = false,
  ) {}

  /** `deadlines` has a bound due at `dueAt` (the clock given), or later. */
  add(deadlines: JudgedCall, dueAt: number): void {
    if (this.first === undefined || this.first === deadlines) {
      this.first = deadlines;
    } else {
      this.others ??= new Set();
      this.others.add(deadlines);
    }
    this.arm(dueAt);
  }

  /** `deadlines` has nothing left to judge; with nothing pending the timer stops, unless kept armed. */
  remove(deadlines: JudgedCall): void {
    if (this.first === deadlines) this.first = undefined;
    else this.others?.delete(deadlines);
    if (!this.keepArmed && this.idle() && this.timer !== undefined && this.firing === undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.dueAt = Number.POSITIVE_INFINITY;
    }
  }

  /**
   * When the timer fired (before the hops): later than due means this process,
   * not Redis, was busy. Measured on the monotonic clock, not `now` (a test's
   * manual clock jumps without the event loop being blocked). False when
   * nothing is left to judge (a kept-armed timer): the timer stops, no hops.
   */
  fired(): boolean {
    if (this.idle()) {
      this.timer = undefined;
      this.dueAt = Number.POSITIVE_INFINITY;
      return false;
    }
    this.firing = { lateBy: this.monotonic() - this.firesAt, due: this.dueAt };
    const at = this.now();
    this.first?.noteFired(at);
    for (const deadlines of this.others ?? []) deadlines.noteFired(at);
    return true;
  }

  /** The timer's check (after the two hops): each call judges its bounds; the timer is armed again for the next due. */
  verdict(): void {
    const firing = this.firing;
    this.firing = undefined;
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
    const at = this.now();
    // Fired late for a call's own due: its silence counts from now, once (CallDeadlines.verdict).
    let next = Number.POSITIVE_INFINITY;
    const first = this.first;
    if (first !== undefined) {
      const inMs = first.verdict(at, firing);
      if (inMs === Number.POSITIVE_INFINITY) this.remove(first);
      else next = inMs;
    }
    for (const deadlines of this.others ?? []) {
      const inMs = deadlines.verdict(at, firing);
      if (inMs === Number.POSITIVE_INFINITY) this.others!.delete(deadlines);
      else next = Math.min(next, inMs);
    }
    if (!this.idle()) this.arm(at + next);
  }

  /** Nothing left to judge. */
  private idle(): boolean {
    return this.first === undefined && (this.others === undefined || this.others.size === 0);
  }

  /** Armed for `at` (the clock given) unless already due as early (a fired timer awaiting its verdict counts as due). */
  private arm(at: number): void {
    if (at >= this.dueAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.dueAt = at;
    const delay = Math.max(1, Math.ceil(at - this.now()));
    this.firesAt = this.monotonic() + delay;
    this.timer = setTimeout(deferVerdict, delay, this);
    this.timer.unref();
  }
}

// Module functions with the timer as argument: no closures per call.
const verdictOf = (timer: DeadlineTimer) => timer.verdict();
const secondHop = (timer: DeadlineTimer) => setImmediate(verdictOf, timer);
const deferVerdict = (timer: DeadlineTimer) => {
  if (timer.fired()) setImmediate(secondHop, timer);
};

export interface AdaptiveDeadlineOptions {
  /** Never below: what an outage costs a decision on a near Redis, ms. */
  floorMs: number;
  /** Never above, ms; a longer silence is no sample. */
  ceilingMs: number;
  /** Headroom over the longest recent silence. */
  factor: number;
  /** How long a silence is remembered, ms. */
  windowMs: number;
  /** The window's slots: a silence is remembered for windowMs less one slot at least, windowMs at most. */
  slots: number;
}

export const ADAPTIVE_DEADLINE: Readonly<AdaptiveDeadlineOptions> = Object.freeze({
  floorMs: 5,
  ceilingMs: 50,
  factor: 2,
  windowMs: 30_000,
  slots: 6,
});

/** The deadline of the calls to the shared store: fixed (`store.deadlineMs`), or adaptive. */
export interface Deadline {
  /** True when it follows the samples. */
  readonly adaptive: boolean;
  /** The deadline of a call sent at `at`, ms. */
  msAt(at: number): number;
  /** A call answered at `at` after its connection was silent for `silentMs`. */
  answered(silentMs: number, at: number): void;
  /** Whether a silence this long or longer can move the deadline at all: a shorter one need not be measured further. */
  learnsFrom(silentMs: number): boolean;
}

export class FixedDeadline implements Deadline {
  readonly adaptive = false;
  constructor(private readonly ms: number) {}
  msAt(): number {
    return this.ms;
  }
  answered(): void {}
  learnsFrom(): boolean {
    return false;
  }
}

export class AdaptiveDeadline implements Deadline {
  readonly adaptive = true;
  private readonly options: AdaptiveDeadlineOptions;
  /** The longest silence of each slot (0: none), a ring; `slot` is the current one. */
  private readonly longest: number[];
  private slot = 0;
  private slotEndsAt: number;
  private readonly slotMs: number;
  private ms: number;

  constructor(startAt: number, options: Partial<AdaptiveDeadlineOptions> = {}) {
    this.options = { ...ADAPTIVE_DEADLINE, ...options };
    const { floorMs, ceilingMs, windowMs, slots, factor } = this.options;
    if (!(floorMs > 0 && ceilingMs >= floorMs && factor >= 1 && slots >= 1 && windowMs >= slots)) throw new RangeError('invalid adaptive deadline options');
    this.longest = new Array<number>(slots).fill(0);
    this.slotMs = windowMs / slots;
    this.slotEndsAt = startAt + this.slotMs;
    this.ms = floorMs;
  }

  msAt(at: number): number {
    if (at >= this.slotEndsAt) this.rotate(at);
    return this.ms;
  }

  /** Below floor / factor a silence changes nothing: on a near Redis, the hot path stops there. */
  learnsFrom(silentMs: number): boolean {
    return silentMs * this.options.factor > this.options.floorMs;
  }

  answered(silentMs: number, at: number): void {
    if (!this.learnsFrom(silentMs) || silentMs > this.options.ceilingMs) return;
    if (at >= this.slotEndsAt) this.rotate(at);
    if (silentMs <= this.longest[this.slot]!) return;
    this.longest[this.slot] = silentMs;
    this.ms = Math.max(this.ms, this.deadlineFor(silentMs));
  }

  /** Starts the slot `at` falls in, forgetting the slots it skipped over and the oldest. */
  private rotate(at: number): void {
    const { slots } = this.options;
    const passed = Math.floor((at - this.slotEndsAt) / this.slotMs) + 1;
    for (let i = 0; i < Math.min(slots, passed); i++) {
      this.slot = (this.slot + 1) % slots;
      this.longest[this.slot] = 0;
    }
    this.slotEndsAt += passed * this.slotMs;
    this.ms = this.deadlineFor(Math.max(...this.longest));
  }

  /** factor × the silence, clamped, rounded up to a tenth of a millisecond. */
  private deadlineFor(silentMs: number): number {
    const { floorMs, ceilingMs, factor } = this.options;
    return Math.min(ceilingMs, Math.max(floorMs, Math.ceil(silentMs * factor * 10) / 10));
  }
}
