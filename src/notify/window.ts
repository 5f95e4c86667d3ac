// Which thresholds a decision crossed, and which window it belongs to: the
// unit an event is deduplicated by. Fixed windows and calendar quotas have a
// real window (its start is the id; the registry's `decisionWindow` names it);
// the rolling policies (token bucket, GCRA, sliding windows, leaky bucket)
// have none, so time is cut into slots
// as long as the bucket takes to fill from empty, at least a minute: at most
// one event per threshold per slot, however long a tenant hovers near it.
import type { Decision } from '../core/decision.js';
import { policyOf } from '../policies/index.js';
import type { Rule } from '../policies/rule.js';

/** The shortest slot of a rolling policy: a hot tenant at 90 % of a one-second bucket is not an event a second. */
export const MIN_ROLLING_SLOT_MS = 60_000;

/**
 * The highest index of `at` (ascending) the decision reached, or -1. `at` t is
 * reached when at least t of the limit is consumed (remaining ≤ (1 - t) × limit);
 * a refused request reaches every threshold.
 */
export function reachedIndex(at: readonly number[], decision: Decision): number {
  if (!decision.allowed) return at.length - 1;
  const { limit, remaining } = decision;
  if (!(limit > 0)) return -1;
  const consumed = (limit - remaining) / limit;
  let index = -1;
  // A tolerance: 4 of 5 is 0.8 exactly, whatever the float division says.
  for (let i = 0; i < at.length; i++) if (consumed + 1e-9 >= at[i]!) index = i;
  return index;
}

export interface NotifyWindow {
  /** The window's id: its start in epoch ms (a slot's start for rolling policies). */
  readonly start: number;
  /** When the limit is whole again: the window's end, or (rolling) when the bucket is full again. */
  readonly resetAt: number;
  /** How long the dedup entry must live: until the window (or slot) ends. */
  readonly ttlMs: number;
}

/** The window of `decision`, made at `now` (this instance's clock; the store's may differ by a little). */
export function windowOf(rule: Rule, decision: Decision, now: number): NotifyWindow {
  const end = now + Math.max(0, decision.resetAfterMs);
  const policy = policyOf(rule);
  // A policy with real windows (the fixed window's calendar, aligned or first_request windows) names the window itself.
  if (policy.decisionWindow !== undefined) return policy.decisionWindow(rule, end, now);
  const slot = Math.max(MIN_ROLLING_SLOT_MS, Math.ceil(policy.model.fillMs(rule)));
  const start = Math.floor(now / slot) * slot;
  return { start, resetAt: end, ttlMs: start + slot - now };
}

