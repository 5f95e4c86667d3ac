// Multi-region limits: each region enforces its share of a limit on
// its own Redis, because synchronising regions on every request would break the
// latency budget. The rebalancer moves the shares toward the traffic each region
// actually sees, within bounds; the decision is this pure function.
import { SluiceError } from '../core/errors.js';

export type Shares = Record<string, number>;

export interface ShareBounds {
  /** No region's share falls below this (default 0.05). */
  minShare: number;
  /** No region's share rises above this (default 0.95). */
  maxShare: number;
  /** Largest change of one region's share per rebalance (default 0.1). */
  maxStep: number;
}

export const DEFAULT_SHARE_BOUNDS: ShareBounds = { minShare: 0.05, maxShare: 0.95, maxStep: 0.1 };

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/**
 * The next shares: each region moves toward its part of the observed traffic by
 * at most `maxStep`, stays within [minShare, maxShare], and the shares sum to 1.
 * No traffic observed: the current shares, normalised.
 */
export function rebalanceShares(observed: Record<string, number>, current: Shares, bounds: ShareBounds = DEFAULT_SHARE_BOUNDS): Shares {
  const regions = [...new Set([...Object.keys(current), ...Object.keys(observed)])].sort();
  const n = regions.length;
  if (n === 0) return {};
  const { minShare, maxShare, maxStep } = bounds;
  if (!(minShare >= 0 && maxShare <= 1 && minShare <= maxShare && maxStep > 0)) {
    throw new SluiceError('ERR_CONFIG_INVALID', 'need 0 <= minShare <= maxShare <= 1 and maxStep > 0', 'rebalance');
  }
  if (n * minShare > 1 || n * maxShare < 1) {
    throw new SluiceError('ERR_CONFIG_INVALID', `${n} regions cannot each hold between ${minShare} and ${maxShare} of a limit`, 'rebalance');
  }
  const now = normalise(regions.map((r) => Math.max(0, current[r] ?? 1 / n)));
  const traffic = regions.map((r) => Math.max(0, observed[r] ?? 0));
  const total = traffic.reduce((a, b) => a + b, 0);
  if (total === 0) return Object.fromEntries(regions.map((r, i) => [r, now[i]!]));

  // Each region may land anywhere in its box: within bounds and one step of where it is.
  const lo = now.map((s) => Math.min(clamp(s, minShare, maxShare), Math.max(minShare, s - maxStep)));
  const hi = now.map((s) => Math.max(clamp(s, minShare, maxShare), Math.min(maxShare, s + maxStep)));
  const next = now.map((_, i) => clamp(traffic[i]! / total, lo[i]!, hi[i]!));
  // Boxes contain a point summing to 1; hand the residual to regions with room, in proportion to it.
  for (let pass = 0; pass < 4; pass++) {
    const residual = 1 - next.reduce((a, b) => a + b, 0);
    if (Math.abs(residual) < 1e-12) break;
    const room = next.map((s, i) => (residual > 0 ? hi[i]! - s : s - lo[i]!));
    const totalRoom = room.reduce((a, b) => a + b, 0);
    if (totalRoom <= 0) break;
    for (let i = 0; i < n; i++) next[i] = next[i]! + (residual * room[i]!) / totalRoom;
  }
  return Object.fromEntries(regions.map((r, i) => [r, next[i]!]));
}

function normalise(values: number[]): number[] {
  const sum = values.reduce((a, b) => a + b, 0);
  return sum > 0 ? values.map((v) => v / sum) : values.map(() => 1 / values.length);
}

/** Parses published shares; undefined when the text is not an object of shares in (0, 1]. */
export function parseShares(text: string): Shares | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const entries = Object.entries(value as Record<string, unknown>);
    if (!entries.every(([, share]) => typeof share === 'number' && share > 0 && share <= 1)) return undefined;
    return Object.fromEntries(entries) as Shares;
  } catch {
    return undefined;
  }
}
