// One descriptor's DescriptorStatus from what its buckets said, as the
// reference words it: OVER_LIMIT with 0 remaining when its limit is over
// (shadow_mode: OK all the same), else what is left; duration_until_reset in
// both; unlimited: OK with MaxUint32 remaining; no limit: OK alone.
import { calendarWindowAt } from '../core/calendar.js';
import type { Decision } from '../core/decision.js';
import { ceilSeconds } from '../http/headers.js';
import type { DescriptorPlan, ReportedLimit } from './rls-plan.js';

export type Code = 'OK' | 'OVER_LIMIT';

export interface RlsStatus {
  code: Code;
  current_limit?: { name?: string; requests_per_unit: number; unit: string };
  limit_remaining?: number;
  duration_until_reset?: { seconds: number; nanos: number };
}

/** The reference's `limit_remaining` of an unlimited descriptor. */
export const MAX_UINT32 = 4_294_967_295;

/** What one limited descriptor's buckets said. */
export interface Outcome {
  readonly plan: DescriptorPlan;
  /** Per rule, before shadow mode: the engine's decision, or a look at the bucket when it was not charged. */
  readonly decisions: readonly Decision[];
  /** Whether its limit is over: refused, or could not admit this request now. */
  readonly over: boolean;
}

export function statusOf(outcome: Outcome, nowMs: number): RlsStatus {
  const { plan, over } = outcome;
  return {
    code: over && !plan.shadow ? 'OVER_LIMIT' : 'OK',
    current_limit: reportedOf(plan.reported),
    limit_remaining: over ? 0 : remainingOf(outcome.decisions),
    duration_until_reset: { seconds: ceilSeconds(untilResetMs(outcome, nowMs)), nanos: 0 },
  };
}

function remainingOf(decisions: readonly Decision[]): number {
  if (decisions.length === 0) return 0;
  let least = Number.POSITIVE_INFINITY;
  for (const decision of decisions) least = Math.min(least, decision.remaining);
  return Math.max(0, Math.floor(least));
}

/** Until the window resets (fixed window) or the refused request could pass; a blocked limit: the end of its unit. */
export function untilResetMs({ plan, decisions, over }: Outcome, nowMs: number): number {
  if (plan.kind === 'blocked') {
    if (plan.calendar !== undefined) return calendarWindowAt(nowMs, plan.calendar).end - nowMs;
    const unitMs = plan.unitSeconds * 1000;
    return unitMs - (nowMs % unitMs);
  }
  let untilMs = over ? 1 : 0;
  for (const decision of decisions) untilMs = Math.max(untilMs, decision.allowed ? decision.resetAfterMs : Math.max(decision.retryAfterMs, 1));
  return untilMs;
}

export function reportedOf(reported: ReportedLimit): NonNullable<RlsStatus['current_limit']> {
  const out: NonNullable<RlsStatus['current_limit']> = { requests_per_unit: reported.requestsPerUnit, unit: reported.unit };
  if (reported.name !== undefined) out.name = reported.name;
  return out;
}
