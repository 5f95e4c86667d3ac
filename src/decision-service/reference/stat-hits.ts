// How the reference counts one descriptor's hits into its statistics
// (base_limiter.go): total_hits all of them; over the limit, the hits past it
// in over_limit and the ones between the near-limit threshold and the limit in
// near_limit (shadow_mode too when the limit is in shadow mode); within it,
// within_limit, and near_limit for the hits past the threshold. The counter
// before and after the request comes from the bucket Sluice reports.
import type { Outcome } from '../rls-status.js';

export interface HitCounts {
  total_hits: number;
  over_limit: number;
  near_limit: number;
  within_limit: number;
  shadow_mode: number;
}

export function hitCountsOf(outcome: Outcome, nearLimitRatio: number): HitCounts {
  const { plan, decisions, over } = outcome;
  const hits = plan.hits;
  const limit = plan.reported.requestsPerUnit;
  const remaining = decisions.length === 0 ? 0 : Math.max(0, Math.floor(Math.min(...decisions.map((decision) => decision.remaining))));
  const near = Math.floor(limit * nearLimitRatio);
  const counts: HitCounts = { total_hits: hits, over_limit: 0, near_limit: 0, within_limit: 0, shadow_mode: 0 };
  if (over) {
    // Not charged: the counter stands where the bucket says, the hits would have gone past it.
    const before = Math.max(0, limit - remaining);
    const after = before + hits;
    if (before >= limit) counts.over_limit = hits;
    else {
      counts.over_limit = after - limit;
      counts.near_limit = limit - Math.max(near, before);
    }
    if (plan.shadow) counts.shadow_mode = hits;
    return counts;
  }
  const after = Math.max(0, limit - remaining);
  const before = after - hits;
  if (after > near) counts.near_limit = before >= near ? hits : after - near;
  counts.within_limit = hits;
  return counts;
}
