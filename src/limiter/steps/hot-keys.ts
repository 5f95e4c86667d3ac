// Spots hot keys from this instance's own traffic: a key seen more than
// `ratePerSec` times within one second switches to leasing, and back once a
// whole second passes below half that rate (hysteresis, so it does not flap).
import { BoundedLru } from '../caches/lru.js';

interface Counter {
  /** Start of the current one-second window (ms). */
  windowStart: number;
  count: number;
  hot: boolean;
}

const WINDOW_MS = 1000;

export class HotKeyDetector {
  private readonly counters: BoundedLru<string, Counter>;

  constructor(
    private readonly ratePerSec: number,
    maxKeys: number,
  ) {
    this.counters = new BoundedLru(maxKeys);
  }

  /** Counts one request on `key` at `now` and says whether the key is hot. */
  observe(key: string, now: number): boolean {
    if (!(this.ratePerSec > 0)) return false;
    let counter = this.counters.get(key);
    if (counter === undefined) {
      counter = { windowStart: now, count: 0, hot: false };
      this.counters.set(key, counter);
    }
    if (now - counter.windowStart >= WINDOW_MS) {
      // A window ended: cool down when it ran below half the threshold, or when whole windows passed idle.
      const idle = now - counter.windowStart >= 2 * WINDOW_MS;
      if (counter.hot && (idle || counter.count < this.ratePerSec / 2)) counter.hot = false;
      counter.windowStart = idle ? now : counter.windowStart + WINDOW_MS;
      counter.count = 0;
    }
    counter.count++;
    if (counter.count > this.ratePerSec) counter.hot = true;
    return counter.hot;
  }
}
