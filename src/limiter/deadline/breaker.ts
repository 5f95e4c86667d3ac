// The circuit breaker in front of Redis (opossum). Its own timeout is off: the
// deadline (deadline.ts) decides what a timeout is and reports it as a failure.
// It opens on `failureThreshold` consecutive failures, or when more than
// `errorThresholdPercentage` of the calls within `rollingWindowMs` fail; while
// open, calls fail at once (no deadline waited); after `resetTimeoutMs` one
// probe goes through (a request's, or the breaker's own when none comes) and
// its success closes it again.
//
// While closed, calls do not go through opossum's fire (its promise, events and
// status per call were a visible part of a decision's CPU): the guard counts
// each call and its outcome here (noteCall, succeeded, failed), the error
// percentage is RollingCounts', and opossum is told only to open. Open and
// half-open, every call goes through opossum's fire as before: opossum keeps
// the state, the reset timer and the half-open probe.
//
// RollingCounts, below: calls and failures over a rolling window of `buckets` slots, as opossum's
// own status counts them (its rollingCountTimeout and rollingCountBuckets):
// what the breaker's error percentage is computed over while it is closed.
// Slots are turned by the clock on use, not by an interval timer.
import type CircuitBreaker from 'opossum';
import type { Logger } from 'pino';
import { loadPackage } from '../../core/load-package.js';
import { breakerTransitions } from '../../metrics/registry.js';

export interface BreakerOptions {
  /** Consecutive failures that open the breaker (default 5). */
  failureThreshold: number;
  /** Failure percentage over the rolling window that opens it (default 50). */
  errorThresholdPercentage: number;
  /** Calls within the window before the percentage counts (default 20). */
  volumeThreshold: number;
  /** Length of the rolling window (default 1000 ms). */
  rollingWindowMs: number;
  /** Time open before a probe is let through (default 500 ms). */
  resetTimeoutMs: number;
  /** Redis silence on a call that counts as a failure (default 250 ms; never less than the deadline). */
  silenceMs: number;
}

type Thunk = () => Promise<unknown>;

/** Called on every opening (a half-open probe that fails re-opens it) and every closing. */
export interface BreakerHooks {
  onOpen?: () => void;
  onClose?: () => void;
}

export class RedisBreaker {
  private readonly breaker: CircuitBreaker<[Thunk], unknown>;
  private consecutiveFailures = 0;
  /** Every call (fired or counted) and failure within the rolling window, for the error percentage. */
  private readonly window: RollingCounts;
  /** Logged once per change: a failed half-open probe re-opens the breaker but changes no mode. */
  private mode: 'redis' | 'fallback' = 'redis';
  /** The last failed call's error message, until the breaker closes: part of /readyz's reason. */
  lastFailure: string | undefined;

  constructor(
    readonly options: BreakerOptions,
    logger: Logger,
    hooks: BreakerHooks = {},
    /** A cheap store call; half-open with no request coming, the breaker sends it itself (probeInBackground). */
    private readonly probe?: () => Promise<unknown>,
  ) {
    const Breaker = loadPackage<typeof CircuitBreaker>('opossum');
    this.breaker = new Breaker<[Thunk], unknown>((run: Thunk) => run(), {
      timeout: false,
      resetTimeout: options.resetTimeoutMs,
      errorThresholdPercentage: options.errorThresholdPercentage,
      volumeThreshold: options.volumeThreshold,
      // The error percentage that opens the breaker is RollingCounts' (below): opossum's own window only sees the calls
      // fired while open or half-open, where any failure re-opens it. So its window turns once per window, not ten
      // times (a timer each, on an idle instance too), and nothing computes the snapshots or latency percentiles no one reads.
      rollingCountTimeout: options.rollingWindowMs,
      rollingCountBuckets: 1,
      enableSnapshots: false,
      rollingPercentilesEnabled: false,
    });
    this.window = new RollingCounts(options.rollingWindowMs, 10);
    this.follow(logger, hooks);
  }

  /** Counts consecutive failures, logs each change of mode once, probes when half-open. */
  private follow(logger: Logger, hooks: BreakerHooks): void {
    this.breaker.on('success', () => {
      this.consecutiveFailures = 0;
    });
    this.breaker.on('failure', (error: unknown) => {
      this.window.failure();
      this.countFailure(error);
    });
    this.breaker.on('open', () => {
      breakerTransitions.inc({ state: 'open' });
      hooks.onOpen?.();
      if (this.mode === 'fallback') return;
      this.mode = 'fallback';
      logger.warn({ mode: 'fallback' }, 'Redis unreachable: circuit breaker open, deciding with the local fallback limiter');
    });
    this.breaker.on('halfOpen', () => {
      breakerTransitions.inc({ state: 'half_open' });
      this.probeInBackground();
    });
    this.breaker.on('close', () => {
      this.consecutiveFailures = 0;
      this.lastFailure = undefined;
      hooks.onClose?.();
      breakerTransitions.inc({ state: 'closed' });
      if (this.mode === 'redis') return;
      this.mode = 'redis';
      logger.info({ mode: 'redis' }, 'Redis answers again: circuit breaker closed, deciding on Redis');
    });
  }

  /** Runs `call` through opossum unless the breaker is open; rejects with code EOPENBREAKER when it is. */
  fire<T>(call: () => Promise<T>): Promise<T> {
    this.window.call();
    return this.breaker.fire(call) as Promise<T>;
  }

  /** A call made while closed, outside opossum: its outcome follows with succeeded() or failed(). */
  noteCall(): void {
    this.window.call();
  }

  /** A counted call succeeded: as opossum's success, it resets the streak and closes a half-open breaker. */
  succeeded(): void {
    this.consecutiveFailures = 0;
    if (this.breaker.halfOpen) this.breaker.close();
  }

  /** A counted call failed (an error, or silent past `silenceMs`): as opossum's failure, it may open the breaker. */
  failed(error: unknown): void {
    this.window.failure();
    this.countFailure(error);
    if (this.breaker.halfOpen) {
      this.breaker.open();
      return;
    }
    const { calls, failures } = this.window.totals();
    if (calls >= this.options.volumeThreshold && (failures / calls) * 100 > this.options.errorThresholdPercentage) this.breaker.open();
  }

  private countFailure(error: unknown): void {
    this.lastFailure = error instanceof Error ? error.message : String(error);
    if (++this.consecutiveFailures >= this.options.failureThreshold && this.breaker.closed) this.breaker.open();
  }

  /** Closed: calls go to Redis. Open or half-open: the store is treated as down. */
  get closed(): boolean {
    return this.breaker.closed;
  }

  /** Open: calls fail at once. Half-open lets one probe through, which may pay a debt first. */
  get opened(): boolean {
    return this.breaker.opened;
  }

  shutdown(): void {
    this.stopped = true;
    this.breaker.shutdown();
  }

  private stopped = false;

  /**
   * Half-open, an idle instance would wait for its next request to find Redis
   * back (and show `fallback` until then): the probe goes through the breaker
   * at once, bounded by `silenceMs` (a paused Redis never answers). Its success
   * closes the breaker; a failure re-opens it and the next half-open probes
   * again. A request that got there first is the probe instead.
   */
  private probeInBackground(): void {
    const probe = this.probe;
    if (!probe || this.stopped) return;
    setImmediate(() => {
      if (this.stopped || !this.breaker.halfOpen) return;
      this.breaker.fire(() => boundedBy(probe(), this.options.silenceMs)).catch(() => undefined);
    });
  }
}

export function isOpenBreakerError(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'EOPENBREAKER';
}

/** Rejects once `ms` have passed without an answer. */
function boundedBy<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export class RollingCounts {
  private readonly slotMs: number;
  private readonly calls: Float64Array;
  private readonly failures: Float64Array;
  /** The slot number (time ÷ slotMs) each cell last counted for. */
  private readonly slotOf: Float64Array;

  constructor(
    windowMs: number,
    private readonly buckets: number,
    private readonly now: () => number = Date.now,
  ) {
    this.slotMs = Math.max(1, windowMs / buckets);
    this.calls = new Float64Array(buckets);
    this.failures = new Float64Array(buckets);
    this.slotOf = new Float64Array(buckets).fill(-1);
  }

  call(): void {
    this.calls[this.cell()]!++;
  }

  failure(): void {
    this.failures[this.cell()]!++;
  }

  /** Calls and failures within the window. */
  totals(): { calls: number; failures: number } {
    const slot = Math.floor(this.now() / this.slotMs);
    let calls = 0;
    let failures = 0;
    for (let i = 0; i < this.buckets; i++) {
      if (slot - this.slotOf[i]! >= this.buckets) continue; // older than the window
      calls += this.calls[i]!;
      failures += this.failures[i]!;
    }
    return { calls, failures };
  }

  /** The current slot's cell, emptied when it last counted for an older slot. */
  private cell(): number {
    const slot = Math.floor(this.now() / this.slotMs);
    const i = slot % this.buckets;
    if (this.slotOf[i] !== slot) {
      this.slotOf[i] = slot;
      this.calls[i] = 0;
      this.failures[i] = 0;
    }
    return i;
  }
}
