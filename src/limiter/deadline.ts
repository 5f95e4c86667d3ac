// The per-call deadline. A call fails when its connection has delivered nothing
// for `deadlineMs` since the call started (the store's connection watch). The verdict is
// deferred after the timer fires by two setImmediate hops: the first lets the
// poll phase read what sits in the socket buffer, the second lets the watch
// stamp the end of processing it. A late timer never beats a reply that has
// arrived, and time spent processing replies is never counted as silence.
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

/**
 * Resolves as `call` does, or rejects with DeadlineError once the channel has
 * been silent for `deadlineMs`. A late reply is dropped, never unhandled.
 */
export function withDeadline<T>(call: Promise<T>, watch: StoreConnection, channel: string, deadlineMs: number, now: Clock): Promise<T> {
  const started = now();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const verdict = () => {
      if (settled) return;
      const silentSince = Math.max(started, watch.lastDataAt(channel));
      const due = silentSince + deadlineMs;
      const at = now();
      if (at >= due) {
        settled = true;
        reject(new DeadlineError(deadlineMs));
      } else {
        // Bytes arrived meanwhile: Redis is alive, our reply is queued behind others.
        arm(due - at);
      }
    };
    const arm = (ms: number) => {
      timer = setTimeout(() => setImmediate(() => setImmediate(verdict)), Math.max(1, Math.ceil(ms)));
    };
    arm(deadlineMs);
    call.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
