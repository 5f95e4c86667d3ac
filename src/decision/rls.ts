// ShouldRateLimit: every descriptor limited, all of a request's limits decided
// together through Engine.decideAll (so each rule's onStoreDown applies when
// Redis is down), OVER_LIMIT when any descriptor is over, one status per
// descriptor in order, and the limit headers for Envoy to pass on.
import type { Decision } from '../core/decision.js';
import { type HeaderOptions, ceilSeconds, pushLimitHeaders, retryAfterSeconds } from '../gateway/headers.js';
import type { Engine, LimitCall } from '../limiter/engine.js';
import type { Domains } from './descriptor-tree.js';
import { type DescriptorPlan, planRequest, type ReportedLimit } from './rls-plan.js';
import { checkRequest, type RlsRequestIn } from './rls-request.js';

export type Code = 'OK' | 'OVER_LIMIT';

export interface RlsStatus {
  code: Code;
  current_limit?: { name?: string; requests_per_unit: number; unit: string };
  limit_remaining?: number;
  duration_until_reset?: { seconds: number; nanos: number };
}

export interface RlsResponse {
  overall_code: Code;
  statuses: RlsStatus[];
  response_headers_to_add: { key: string; value: string }[];
}

export class RateLimitDecider {
  constructor(
    private readonly domains: Domains,
    private readonly engine: Engine,
    private readonly headerOptions: HeaderOptions,
  ) {}

  /** Throws RlsBadRequest for a request it cannot decide; never for a store failure. */
  async shouldRateLimit(request: RlsRequestIn): Promise<RlsResponse> {
    const plans = planRequest(this.domains, checkRequest(request));
    const calls: LimitCall[] = [];
    const owners: number[] = [];
    plans.forEach((plan, index) => {
      for (const call of plan?.calls ?? []) {
        calls.push(call);
        owners.push(index);
      }
    });
    // A cost no rule could ever grant: refused without draining anything.
    if (plans.some((plan) => plan?.impossible)) return impossibleResponse(plans);
    if (calls.length === 0) return { overall_code: 'OK', statuses: plans.map(() => ({ code: 'OK' })), response_headers_to_add: [] };
    const result = await this.engine.decideAll(calls);
    const statuses = plans.map((plan, index) => (plan ? statusOf(plan, result.decisions.filter((_, call) => owners[call] === index)) : { code: 'OK' as const }));
    const governing = result.decisions[result.governing]!;
    const plan = plans[owners[result.governing]!]!;
    return {
      overall_code: result.allowed ? 'OK' : 'OVER_LIMIT',
      statuses,
      response_headers_to_add: limitHeaders(governing, plan, calls[result.governing]!, this.headerOptions),
    };
  }
}

function statusOf(plan: DescriptorPlan, decisions: readonly Decision[]): RlsStatus {
  const allowed = decisions.every((decision) => decision.allowed);
  const remaining = Math.min(...decisions.map((decision) => (decision.allowed ? decision.remaining : 0)));
  const untilReset = Math.max(...decisions.map((decision) => (decision.allowed ? decision.resetAfterMs : Math.max(decision.retryAfterMs, 1))));
  return {
    code: allowed ? 'OK' : 'OVER_LIMIT',
    current_limit: reportedOf(plan.reported),
    limit_remaining: Math.max(0, Math.floor(remaining)),
    duration_until_reset: { seconds: ceilSeconds(untilReset), nanos: 0 },
  };
}

function reportedOf(reported: ReportedLimit): NonNullable<RlsStatus['current_limit']> {
  const out: NonNullable<RlsStatus['current_limit']> = { requests_per_unit: reported.requestsPerUnit, unit: reported.unit };
  if (reported.name !== undefined) out.name = reported.name;
  return out;
}

function impossibleResponse(plans: readonly (DescriptorPlan | undefined)[]): RlsResponse {
  const statuses = plans.map((plan): RlsStatus => {
    if (plan === undefined) return { code: 'OK' };
    return { code: plan.impossible ? 'OVER_LIMIT' : 'OK', current_limit: reportedOf(plan.reported), limit_remaining: 0 };
  });
  return { overall_code: 'OVER_LIMIT', statuses, response_headers_to_add: [] };
}

function limitHeaders(decision: Decision, plan: DescriptorPlan, call: LimitCall, options: HeaderOptions): { key: string; value: string }[] {
  const flat: string[] = [];
  if (!decision.allowed) flat.push('Retry-After', String(retryAfterSeconds(decision)));
  pushLimitHeaders(flat, decision, plan.headerId, call.rule, options);
  const out: { key: string; value: string }[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push({ key: flat[i]!, value: flat[i + 1]! });
  return out;
}
