// Calls and failures over a rolling window of `buckets` slots, as opossum's
// own status counts them (its rollingCountTimeout and rollingCountBuckets):
// what the breaker's error percentage is computed over while it is closed.
// Slots are turned by the clock on use, not by an interval timer.
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
