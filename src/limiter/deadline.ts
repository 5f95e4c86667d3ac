// The per-call deadline. A call fails when its connection has delivered nothing
// for `deadlineMs` since the call started (the store's connection watch). The verdict is
// deferred after the timer fires by two setImmediate hops: the first lets the
// poll phase read what sits in the socket buffer, the second lets the watch
// stamp the end of processing it. A late timer never beats a reply that has
// arrived, and time spent processing replies is never counted as silence.
//
// A store call has two deadlines: the request's, and the breaker's (the
// silence that counts as a failure, never shorter). Both run on one timer
// (CallDeadlines): a timer per deadline was measurable CPU on every request.
import type { Clock } from '../stores/clock.js';
import type { StoreConnection } from '../stores/store.js';

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

/** A promise bound to a deadline: rejected once the channel is silent for `ms`. */
interface Bound {
  ms: number;
  reject: (error: DeadlineError) => void;
  settled: boolean;
}

/**
 * The deadlines of one call started now, on one timer. `bound` resolves as the
 * call does, or rejects with DeadlineError once the channel has been silent for
 * its `ms`. A late reply is dropped, never unhandled.
 */
export class CallDeadlines {
  private readonly started: number;
  private readonly pending: Bound[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** `firstMs`: the shortest deadline that will be bound (the timer's first due). */
  constructor(
    private readonly watch: StoreConnection,
    private readonly channel: string,
    private readonly now: Clock,
    firstMs: number,
  ) {
    this.started = now();
    this.arm(firstMs);
  }

  bound<T>(call: Promise<T>, ms: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const bound: Bound = { ms, reject, settled: false };
      this.pending.push(bound);
      // Bound after every earlier one settled (the timer stopped): it needs a timer of its own.
      if (this.timer === undefined) this.arm(Math.max(0, this.started + ms - this.now()));
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

  /** Marks `bound` settled; false if its deadline came first. The timer stops with the last one. */
  private settle(bound: Bound): boolean {
    if (bound.settled) return false;
    bound.settled = true;
    this.pending.splice(this.pending.indexOf(bound), 1);
    if (this.pending.length === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    return true;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(deferVerdict, Math.max(1, Math.ceil(ms)), this);
  }

  /** The timer's check (after the two hops): rejects each call silent for its `ms`, re-arms for the others. */
  verdict(): void {
    this.timer = undefined;
    const silentSince = Math.max(this.started, this.watch.lastDataAt(this.channel));
    const at = this.now();
    let next = Number.POSITIVE_INFINITY;
    for (const bound of [...this.pending]) {
      const due = silentSince + bound.ms;
      if (at >= due) {
        this.settle(bound);
        bound.reject(new DeadlineError(bound.ms));
      } else {
        // Bytes arrived meanwhile, or a longer deadline: Redis is alive, the reply is queued behind others.
        next = Math.min(next, due - at);
      }
    }
    if (this.pending.length > 0 && this.timer === undefined) this.arm(next);
  }
}

// Module functions with the instance as argument: no closures per call.
const verdictOf = (deadlines: CallDeadlines) => deadlines.verdict();
const secondHop = (deadlines: CallDeadlines) => setImmediate(verdictOf, deadlines);
const deferVerdict = (deadlines: CallDeadlines) => setImmediate(secondHop, deadlines);
