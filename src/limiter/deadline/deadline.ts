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
// The timer that judges calls' deadlines: armed for the earliest due, fired, then its verdict deferred by two setImmediate hops (the
// first lets the poll phase read what sits in the socket buffer, the second
// lets the connection watch stamp the end of processing it).
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

/** A deadline of one call: a promise's reject, or a callback (watch). */
export interface Bound {
  ms: number;
  onSilent: (error: DeadlineError) => void;
  settled: boolean;
}

/** How long this process's event loop has waited for events, in all, ms (a field read, cheap enough for every call). */
const loopIdleMs = () => nodePerformance.nodeTiming.idleTime;

/**
 * The deadlines of one call started now, judged by a shared timer (one of its
 * own when none is given). `bound` resolves as the call does, or rejects with
 * DeadlineError once the channel has been silent for its `ms`; `watch` calls
 * back instead of rejecting. A late reply is dropped, never unhandled.
 */
export class CallDeadlines implements JudgedCall {
  /** When the call started (the clock given). */
  readonly started: number;
  private readonly pending: Bound[] = [];
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

  /** `firstMs`: the shortest deadline that will be bound (the timer's first due). */
  constructor(
    private readonly watcher: StoreConnection,
    readonly channel: string,
    private readonly now: Clock,
    private readonly firstMs: number,
    private readonly timer: DeadlineTimer = new DeadlineTimer(now),
  ) {
    this.started = now();
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

  /** A deadline without a promise: `onSilent` runs once the channel is silent for `ms`, unless settle(bound) came first. */
  watch(ms: number, onSilent: (error: DeadlineError) => void): Bound {
    const bound: Bound = { ms, onSilent, settled: false };
    if (this.pending.length === 0) {
      // One read of the clock: the shared timer, usually armed already, reads none.
      this.dueAt = Math.max(this.now(), this.started + Math.min(ms, this.firstMs));
      this.timer.add(this, this.dueAt);
    }
    this.pending.push(bound);
    return bound;
  }

  /** Marks `bound` settled; false if its deadline came first. */
  settle(bound: Bound): boolean {
    if (bound.settled) return false;
    bound.settled = true;
    this.pending.splice(this.pending.indexOf(bound), 1);
    if (this.pending.length === 0) this.timer.remove(this);
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
    let next = Number.POSITIVE_INFINITY;
    for (const bound of [...this.pending]) {
      const due = silentSince + bound.ms;
      if (at >= due) {
        this.settle(bound);
        bound.onSilent(new DeadlineError(bound.ms));
      } else {
        // Bytes arrived meanwhile, or a longer deadline: Redis is alive, the reply is queued behind others.
        next = Math.min(next, due - at);
      }
    }
    if (this.pending.length === 0) return Number.POSITIVE_INFINITY;
    this.dueAt = at + next;
    return next;
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
