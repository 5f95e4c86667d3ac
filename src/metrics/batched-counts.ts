// Counts and observations of the request path as plain numbers, handed to
// prom-client when its registry is read: a bound prom-client counter still
// hashes and validates its labels on every inc, a histogram on every observe
// (a visible share of a proxied request's CPU under --cpu-prof). Give the
// metric `collect() { batch.flush(this) }`: every read (a
// scrape, get(), getSingleMetricAsString) flushes first, so no read is behind.
import type { Counter, Histogram, LabelValues } from 'prom-client';

/** One label set's count on the request path. */
export interface BatchedCount {
  inc(): void;
}

/** A label set as one string, whatever the order its names were given in. */
function keyOf(labels: object): string {
  return Object.entries(labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${String(value)}`)
    .join('\u0000');
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
    let slot = this.slots.get(keyOf(labels));
    if (slot === undefined) {
      slot = new Slot(labels);
      this.slots.set(keyOf(labels), slot);
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

/** One label set's observations on the request path. */
export interface BatchedObservations {
  observe(value: number): void;
}

/** prom-client 15's entry for one label set of a histogram, what its observe() adds to (test/metrics/batched-counts.test.ts pins it). */
interface HistogramEntry {
  labels: Record<string, string | number>;
  bucketValues: Record<number, number>;
  sum: number;
  count: number;
}

class Observed<L extends string> implements BatchedObservations {
  /** Per upper bound, like prom-client's bucketValues: not cumulative; a value above every bound is counted in `count` only. */
  readonly buckets: number[];
  sum = 0;
  count = 0;
  constructor(
    readonly labels: LabelValues<L>,
    private readonly bounds: readonly number[],
  ) {
    this.buckets = bounds.map(() => 0);
  }
  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    if (i < bounds.length) this.buckets[i]!++;
    this.sum += value;
    this.count++;
  }
}

const sameLabels = (entry: HistogramEntry, labels: Record<string, string | number>) => Object.entries(labels).every(([name, value]) => entry.labels[name] === value);

/** The same for a histogram with `bounds` (its buckets): give it `collect() { batch.flush(this) }`. */
export class HistogramBatch<L extends string> {
  private readonly slots = new Map<string, Observed<L>>();
  constructor(private readonly bounds: readonly number[]) {}

  bind(labels: LabelValues<L>): BatchedObservations {
    let slot = this.slots.get(keyOf(labels));
    if (slot === undefined) {
      slot = new Observed(labels, this.bounds);
      this.slots.set(keyOf(labels), slot);
    }
    return slot;
  }

  flush(histogram: Histogram<L>): void {
    const entries = (histogram as unknown as { hashMap: Record<string, HistogramEntry> }).hashMap;
    for (const slot of this.slots.values()) {
      if (slot.count === 0) continue;
      const labels = slot.labels as Record<string, string | number>;
      let entry = Object.values(entries).find((e) => sameLabels(e, labels));
      if (entry === undefined) {
        histogram.zero(slot.labels);
        entry = Object.values(entries).find((e) => sameLabels(e, labels))!;
      }
      this.bounds.forEach((bound, i) => {
        entry.bucketValues[bound] = (entry.bucketValues[bound] ?? 0) + slot.buckets[i]!;
        slot.buckets[i] = 0;
      });
      entry.sum += slot.sum;
      entry.count += slot.count;
      slot.sum = 0;
      slot.count = 0;
    }
  }
}
