// Counts of the request path as plain numbers, handed to prom-client when its
// registry is read: a bound prom-client counter still hashes and validates its
// labels on every inc (with the histogram, about 1 % of a proxied request's CPU
// under --cpu-prof). Give the counter `collect() { batch.flush(this) }`: every
// read (a scrape, get(), getSingleMetricAsString) flushes first, so nothing
// read is ever behind.
import type { Counter, LabelValues } from 'prom-client';

/** One label set's count on the request path. */
export interface BatchedCount {
  inc(): void;
}

class Slot<L extends string> implements BatchedCount {
  pending = 0;
  constructor(readonly labels: LabelValues<L>) {}
  inc(): void {
    this.pending++;
  }
}

export class CounterBatch<L extends string> {
  /** One slot per label set, however often it is bound (a reload binds the same series again). */
  private readonly slots = new Map<string, Slot<L>>();

  bind(labels: LabelValues<L>): BatchedCount {
    const key = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, value]) => `${name}=${String(value)}`).join('\u0000');
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = new Slot(labels);
      this.slots.set(key, slot);
    }
    return slot;
  }

  /** Adds the pending counts to `counter`; its `collect` calls this. */
  flush(counter: Counter<L>): void {
    for (const slot of this.slots.values()) {
      if (slot.pending === 0) continue;
      counter.inc(slot.labels, slot.pending);
      slot.pending = 0;
    }
  }
}
