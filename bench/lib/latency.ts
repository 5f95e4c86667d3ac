// Latency recording in nanoseconds with HdrHistogram (3 significant digits),
// summarised in microseconds.
import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  p50Us: number;
  p99Us: number;
  p999Us: number;
  maxUs: number;
  meanUs: number;
  count: number;
}

export class LatencyRecorder {
  private readonly histogram = hdr.build({ bitBucketSize: 64, lowestDiscernibleValue: 1, highestTrackableValue: 120e9, numberOfSignificantValueDigits: 3 });

  /** Records one latency given in milliseconds (performance.now() differences). */
  recordMs(ms: number): void {
    this.histogram.recordValue(Math.max(1, Math.round(ms * 1e6)));
  }

  summary(): LatencySummary {
    const h = this.histogram;
    const us = (ns: number) => round(ns / 1000, 1);
    return {
      p50Us: us(h.getValueAtPercentile(50)),
      p99Us: us(h.getValueAtPercentile(99)),
      p999Us: us(h.getValueAtPercentile(99.9)),
      maxUs: us(h.maxValue),
      meanUs: us(h.mean),
      count: h.totalCount,
    };
  }
}

export function round(value: number, digits = 0): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
