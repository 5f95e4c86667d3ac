// The timer that judges calls' deadlines (see deadline.ts): armed for the
// earliest due, fired, then its verdict deferred by two setImmediate hops (the
// first lets the poll phase read what sits in the socket buffer, the second
// lets the connection watch stamp the end of processing it).
import type { Clock } from '../stores/clock.js';

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
