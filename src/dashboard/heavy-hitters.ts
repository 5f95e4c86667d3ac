// The most refused (tenant, route) pairs with fixed memory, whatever the number
// of tenants: Space-Saving keeps `capacity` counters; an unseen key takes over
// the smallest one and inherits its count as its error bound, so a key that is
// truly heavy is never missed. Two generations (this window and the previous
// one) make it "the last few minutes" rather than "since start".

export interface HeavyHitter {
  key: string;
  /** An upper bound of the key's count; count - error is a lower bound. */
  count: number;
  error: number;
}

export class SpaceSaving {
  private readonly index = new Map<string, number>();
  private readonly keys: string[] = [];
  private readonly counts: number[] = [];
  private readonly errors: number[] = [];

  constructor(readonly capacity: number) {}

  add(key: string, n = 1): void {
    const at = this.index.get(key);
    if (at !== undefined) {
      this.counts[at]! += n;
      return;
    }
    if (this.keys.length < this.capacity) {
      this.index.set(key, this.keys.length);
      this.keys.push(key);
      this.counts.push(n);
      this.errors.push(0);
      return;
    }
    let min = 0;
    for (let i = 1; i < this.counts.length; i++) if (this.counts[i]! < this.counts[min]!) min = i;
    this.index.delete(this.keys[min]!);
    this.index.set(key, min);
    this.keys[min] = key;
    this.errors[min] = this.counts[min]!;
    this.counts[min]! += n;
  }

  entries(): HeavyHitter[] {
    return this.keys.map((key, i) => ({ key, count: this.counts[i]!, error: this.errors[i]! }));
  }

  get size(): number {
    return this.keys.length;
  }
}

/** Space-Saving over the current and the previous window of `windowMs`. */
export class RecentHeavyHitters {
  private current: SpaceSaving;
  private previous: SpaceSaving;
  private windowStart: number;

  constructor(
    readonly capacity: number,
    readonly windowMs: number,
    now: number,
  ) {
    this.current = new SpaceSaving(capacity);
    this.previous = new SpaceSaving(capacity);
    this.windowStart = now;
  }

  add(key: string, now: number): void {
    this.rotate(now);
    this.current.add(key);
  }

  /** The `k` heaviest keys of both windows, heaviest first. */
  top(k: number, now: number): HeavyHitter[] {
    this.rotate(now);
    const merged = new Map<string, HeavyHitter>();
    for (const entry of [...this.previous.entries(), ...this.current.entries()]) {
      const seen = merged.get(entry.key);
      if (seen) {
        seen.count += entry.count;
        seen.error += entry.error;
      } else merged.set(entry.key, { ...entry });
    }
    return [...merged.values()].sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1)).slice(0, k);
  }

  private rotate(now: number): void {
    if (now - this.windowStart < this.windowMs) return;
    // A long quiet spell empties both windows, not only the older one.
    this.previous = now - this.windowStart < 2 * this.windowMs ? this.current : new SpaceSaving(this.capacity);
    this.current = new SpaceSaving(this.capacity);
    this.windowStart = now;
  }
}
