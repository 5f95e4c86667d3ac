// Client traffic for the window-stray simulation: request times (ms) of one
// client over a simulated span, from a seeded generator so every run replays
// the same traces. Rates are relative to the limit's own rate (limit / window).

export type TraceName = 'smooth' | 'bursty' | 'mostly idle';
export const TRACES: readonly TraceName[] = ['smooth', 'bursty', 'mostly idle'];

/** mulberry32: small, fast and good enough to draw traffic from. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const exponential = (random: () => number, mean: number) => -Math.log(1 - random()) * mean;

export interface TraceShape {
  /** The limit's own rate, requests per ms (limit / windowMs). */
  limitRatePerMs: number;
  spanMs: number;
}

/**
 * - smooth: Poisson arrivals at 0.5× to 2× the limit's rate (drawn per client);
 * - bursty: bursts of 20–120 requests within 2 s, at Poisson times, averaging 0.5× to 2× the rate;
 * - mostly idle: a burst of 50–200 requests within 5 s about every 5 minutes, idle between.
 */
export function traceOf(name: TraceName, shape: TraceShape, random: () => number): number[] {
  const times: number[] = [];
  const { limitRatePerMs, spanMs } = shape;
  if (name === 'smooth') {
    const meanGap = 1 / (limitRatePerMs * (0.5 + 1.5 * random()));
    for (let at = exponential(random, meanGap); at < spanMs; at += exponential(random, meanGap)) times.push(at);
    return times;
  }
  const burst = name === 'bursty' ? { min: 20, max: 120, withinMs: 2_000 } : { min: 50, max: 200, withinMs: 5_000 };
  const meanSize = (burst.min + burst.max) / 2;
  const meanGap = name === 'bursty' ? meanSize / (limitRatePerMs * (0.5 + 1.5 * random())) : 300_000;
  for (let start = exponential(random, meanGap / 2); start < spanMs; start += exponential(random, meanGap)) {
    const size = burst.min + Math.floor(random() * (burst.max - burst.min + 1));
    for (let i = 0; i < size; i++) {
      const at = start + random() * burst.withinMs;
      if (at < spanMs) times.push(at);
    }
  }
  return times.sort((a, b) => a - b);
}
