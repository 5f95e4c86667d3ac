// The per-call deadline. A call fails when its connection has delivered nothing
// for `deadlineMs` since the call started (the store's connection watch). The
// timer that judges it (DeadlineTimer, below) defers its verdict past the poll
// phase, so a late timer never beats a reply that has arrived, and time spent
// processing replies is never counted as silence.
//
// A store call has two deadlines: the request's, and the breaker's (the
// silence that counts as a failure, never shorter); both are judged by one
// timer of the call's own (a timer shared by a guard's calls judged a
// 1,000-call burst too early: guard.ts).
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
    private readonly idle: () => number = loopIdleMs,
  ) {
    this.started = now();
    this.idleAtStart = idle();
  }

  /**
   * How long the event loop waited for events since the call started: what
   * Redis's silence can have been at most. Once the reply has arrived the loop
   * never waits (its socket is readable), so a stall of this process, however
   * short (a GC pause, a burst of requests, code compiled), is not in it.
   */
  idleSinceStart(): number {
    return this.idle() - this.idleAtStart;
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
    if (this.pending.length === 0) this.timer.add(this, Math.max(0, Math.min(ms, this.firstMs) + this.started - this.now()));
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

  /** The timer judging this call fired at `at`; its verdict comes after the poll phase. */
  noteFired(at: number): void {
    this.firedAt = at;
  }

  /**
   * Rejects each bound silent for its `ms` at `at`; the ms until the next due,
   * or Infinity when none is left. `busySince`: the timer fired late, so this
   * process was busy (a burst of calls issued in one turn leaves the socket
   * only when the turn ends, and Redis answers it after that): once per call,
   * the silence counts from `busySince` (the verdict), not from before Redis
   * could even read the call.
   */
  verdict(at: number, busySince?: number): number {
    this.firedAt = undefined;
    if (busySince !== undefined && this.busyFrom === undefined) this.busyFrom = busySince;
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
    return this.pending.length > 0 ? next : Number.POSITIVE_INFINITY;
  }
}

/** A timer this much past its due says the event loop was blocked (timers are otherwise within a millisecond). */
const LATE_MS = 2;

const performanceNow = () => performance.now();

/** What the timer judges: one call's deadlines (CallDeadlines). */
export interface JudgedCall {
  /** The timer fired at `at`; its verdict comes after the poll phase. */
  noteFired(at: number): void;
  /** Rejects each bound silent at `at`; the ms until the next due, or Infinity when none is left. */
  verdict(at: number, busySince?: number): number;
}

/**
 * The timer of one call's deadlines (the guard's, one per call) or of many (a
 * test's shared timer): armed for the earliest due, stopped when nothing is
 * left to judge. The usual single call is kept in a field, not a Set: no Set
 * is made per call (the Sets made per proxied request came to about 0.45 KB
 * of its allocations, this one among them).
 */
export class DeadlineTimer {
  /** The first call judged; more (a shared timer) go in `others`. */
  private first: JudgedCall | undefined;
  private others: Set<JudgedCall> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private dueAt = Number.POSITIVE_INFINITY;
  private late = false;
  /** Fired, its verdict not yet run (the two hops). */
  private firing = false;
  /** performance.now() when the armed timer is due. */
  private firesAt = 0;

  /** `monotonic`: the clock that says whether this process was busy (a test on a manual `now` gives one that never lags). */
  constructor(
    private readonly now: Clock,
    private readonly monotonic: () => number = performanceNow,
  ) {}

  /** `deadlines` has a bound due in `inMs` (or later). */
  add(deadlines: JudgedCall, inMs: number): void {
    if (this.first === undefined || this.first === deadlines) {
      this.first = deadlines;
    } else {
      this.others ??= new Set();
      this.others.add(deadlines);
    }
    this.arm(inMs);
  }

  /** `deadlines` has nothing left to judge; with nothing pending the timer stops. */
  remove(deadlines: JudgedCall): void {
    if (this.first === deadlines) this.first = undefined;
    else this.others?.delete(deadlines);
    if (this.idle() && this.timer !== undefined && !this.firing) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.dueAt = Number.POSITIVE_INFINITY;
    }
  }

  /**
   * When the timer fired (before the hops): later than due means this process,
   * not Redis, was busy. Measured on the monotonic clock, not `now` (a test's
   * manual clock jumps without the event loop being blocked).
   */
  fired(): void {
    this.firing = true;
    this.late = this.monotonic() - this.firesAt >= LATE_MS;
    const at = this.now();
    this.first?.noteFired(at);
    for (const deadlines of this.others ?? []) deadlines.noteFired(at);
  }

  /** The timer's check (after the two hops): each call judges its bounds; the timer is armed again for the next due. */
  verdict(): void {
    this.firing = false;
    this.timer = undefined;
    this.dueAt = Number.POSITIVE_INFINITY;
    const at = this.now();
    // Fired late: the calls' silence counts from now, once (CallDeadlines.verdict, deadline.ts).
    const busySince = this.late ? at : undefined;
    let next = Number.POSITIVE_INFINITY;
    const first = this.first;
    if (first !== undefined) {
      const inMs = first.verdict(at, busySince);
      if (inMs === Number.POSITIVE_INFINITY) this.remove(first);
      else next = inMs;
    }
    for (const deadlines of this.others ?? []) {
      const inMs = deadlines.verdict(at, busySince);
      if (inMs === Number.POSITIVE_INFINITY) this.others!.delete(deadlines);
      else next = Math.min(next, inMs);
    }
    if (!this.idle()) this.arm(next);
  }

  /** Nothing left to judge. */
  private idle(): boolean {
    return this.first === undefined && (this.others === undefined || this.others.size === 0);
  }

  /** Armed for `inMs` from now unless already due as early (a fired timer awaiting its verdict counts as due). */
  private arm(inMs: number): void {
    const at = this.now() + inMs;
    if (at >= this.dueAt) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.dueAt = at;
    const delay = Math.max(1, Math.ceil(inMs));
    this.firesAt = this.monotonic() + delay;
    this.timer = setTimeout(deferVerdict, delay, this);
    this.timer.unref();
  }
}

// Module functions with the timer as argument: no closures per call.
const verdictOf = (timer: DeadlineTimer) => timer.verdict();
const secondHop = (timer: DeadlineTimer) => setImmediate(verdictOf, timer);
const deferVerdict = (timer: DeadlineTimer) => {
  timer.fired();
  setImmediate(secondHop, timer);
};
