// ShouldRateLimit: every descriptor limited, as the reference answers it. The
// limits of a request are decided together through Engine.decideAll (so each
// rule's onStoreDown applies when Redis is down): a refused request charges no
// bucket. A limit that refuses every request (requests_per_unit 0) or can never
// hold the hits refuses it before any bucket is touched. Every descriptor that
// did not refuse reports its bucket's real state (a look when it was not
// charged). quota_mode descriptors are decided after the others, each on its
// own, and refuse the request only when all of them are over.
import type { Decision } from '../core/decision.js';
import type { HeaderOptions } from '../gateway/headers.js';
import type { Engine, LimitCall } from '../limiter/engine.js';
import type { Domains } from './descriptor-tree.js';
import { responseHeaders } from './rls-headers.js';
import { type DescriptorPlan, planRequest } from './rls-plan.js';
import { checkRequest, type RlsRequestIn } from './rls-request.js';
import { type Code, MAX_UINT32, type Outcome, type RlsStatus, statusOf } from './rls-status.js';

export type { Code, RlsStatus } from './rls-status.js';

export interface RlsResponse {
  overall_code: Code;
  statuses: RlsStatus[];
  response_headers_to_add: { key: string; value: string }[];
}

type Plans = readonly (DescriptorPlan | undefined)[];

export interface DeciderOptions {
  /** The reference's SHADOW_MODE: every limit decided and reported, the request always answered OK. */
  shadowMode?: boolean;
  /** Told what every limited descriptor's buckets said (the reference's statistics). */
  observe?: (outcomes: readonly Outcome[]) => void;
  now?: () => number;
}

export class RateLimitDecider {
  constructor(
    private readonly domains: Domains,
    private readonly engine: Engine,
    private readonly headerOptions: HeaderOptions,
    private readonly options: DeciderOptions = {},
  ) {}

  /** Throws RlsBadRequest for a request it cannot decide; never for a store failure, never for a refusal. */
  async shouldRateLimit(request: RlsRequestIn): Promise<RlsResponse> {
    const planned = planRequest(this.domains, checkRequest(request));
    const plans = planned.map((plan) => (typeof plan === 'object' ? plan : undefined));
    const outcomes = await this.outcomesOf(plans);
    const nowMs = (this.options.now ?? Date.now)();
    const statuses = planned.map((plan, i): RlsStatus => {
      if (plan === undefined) return { code: 'OK' };
      if (plan === 'unlimited') return { code: 'OK', limit_remaining: MAX_UINT32 };
      return statusOf(outcomes[i]!, nowMs);
    });
    const overall = this.options.shadowMode ? 'OK' : overallCode(plans, statuses);
    this.options.observe?.(outcomes.filter((outcome): outcome is Outcome => outcome !== undefined));
    return { overall_code: overall, statuses, response_headers_to_add: responseHeaders(outcomes, statuses, overall, nowMs, this.headerOptions) };
  }

  private async outcomesOf(plans: Plans): Promise<(Outcome | undefined)[]> {
    const refusedAtOnce = plans.some((plan) => plan && (plan.kind === 'blocked' || plan.kind === 'impossible') && !plan.shadow && !plan.quota);
    const deciding = (quota: boolean) => (refusedAtOnce ? [] : plans.flatMap((plan, i) => (plan?.kind === 'decide' && plan.quota === quota ? [i] : [])));
    const outcomes: (Outcome | undefined)[] = plans.map(() => undefined);
    const main = await this.decide(plans, deciding(false), outcomes);
    // quota_mode descriptors only once the others admitted the request, each on its own
    const quota = deciding(true);
    if (main && quota.length > 0) await Promise.all(quota.map((i) => this.decide(plans, [i], outcomes)));
    const unlooked = plans.flatMap((plan, i) => (plan && outcomes[i] === undefined ? [i] : []));
    if (unlooked.length > 0) {
      const looked = await Promise.all(unlooked.map((i) => this.looked(plans[i]!)));
      unlooked.forEach((i, k) => {
        outcomes[i] = looked[k];
      });
    }
    return outcomes;
  }

  /** Decides the plans at `indexes` together; fills their outcomes (a limit not consulted is left for a look). Whether admitted. */
  private async decide(plans: Plans, indexes: readonly number[], outcomes: (Outcome | undefined)[]): Promise<boolean> {
    const calls: LimitCall[] = [];
    const owners: number[] = [];
    for (const i of indexes) {
      for (const call of plans[i]!.calls) {
        calls.push(call);
        owners.push(i);
      }
    }
    if (calls.length === 0) return true;
    const result = await this.engine.decideAll(calls);
    for (const i of indexes) {
      const mine = owners.flatMap((owner, k) => (owner === i ? [k] : []));
      if (result.consulted && mine.some((k) => !result.consulted![k])) continue;
      const decisions = mine.map((k) => result.decisions[k]!);
      outcomes[i] = { plan: plans[i]!, decisions, over: decisions.some((decision) => !decision.allowed) };
    }
    return result.allowed;
  }

  /** A descriptor not charged: its buckets as they are (the engine's peek), never counted. */
  private async looked(plan: DescriptorPlan): Promise<Outcome> {
    if (plan.kind === 'blocked') return { plan, decisions: [], over: true };
    const decisions: Decision[] = await Promise.all(plan.calls.map((call) => this.engine.peek(call.tag, call.name, call.rule)));
    const over = plan.kind === 'impossible' || (plan.kind === 'decide' && decisions.some((decision) => !decision.allowed));
    return { plan, decisions, over };
  }
}

/** OVER_LIMIT when a descriptor refuses, or when every quota_mode descriptor of the request is over. */
function overallCode(plans: Plans, statuses: readonly RlsStatus[]): Code {
  const over = (i: number) => statuses[i]!.code === 'OVER_LIMIT';
  if (plans.some((plan, i) => plan && !plan.quota && over(i))) return 'OVER_LIMIT';
  const quota = plans.flatMap((plan, i) => (plan?.quota ? [i] : []));
  return quota.length > 0 && quota.every(over) ? 'OVER_LIMIT' : 'OK';
}
