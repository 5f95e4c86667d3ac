// ShouldRateLimit: every descriptor limited, as the reference answers it. The
// limits of a request are decided together through Engine.decideAll (so each
// rule's onStoreDown applies when Redis is down): a refused request charges no
// bucket. A limit that refuses every request (requests_per_unit 0) or can never
// hold the hits refuses it before any bucket is touched. Every descriptor that
// did not refuse reports its bucket's real state (a look when it was not
// charged). quota_mode descriptors are decided after the others, each on its
// own, and refuse the request only when all of them are over. A usage report
// (a descriptor marked `sluice_usage: report`) is charged first, never refused.
import type { Decision } from '../core/decision.js';
import type { HeaderOptions } from '../http/headers.js';
import type { Engine } from '../limiter/engine/engine.js';
import type { ListChecker } from '../lists/list-set.js';
import { chargeReport } from '../usage/report.js';
import type { Domains } from './descriptor-tree.js';
import { responseHeaders } from './rls-headers.js';
import { listActionOf, listedResponse } from './rls-lists.js';
import { type DescriptorPlan, withSelectedPlans } from './rls-plan.js';
import type { PlanRules } from './rls-plan-select.js';
import { type Batch, type RequestPlan, RequestPlans, requestPlanOf } from './rls-request-plan.js';
import type { RlsRequestIn } from './rls-request.js';
import { type Code, MAX_UINT32, type Outcome, type RlsStatus, statusOf } from './rls-status.js';

export type { Code, RlsStatus } from './rls-status.js';

export interface RlsResponse {
  overall_code: Code;
  statuses: RlsStatus[];
  response_headers_to_add: { key: string; value: string }[];
  /** The body Envoy sends a refused client: only a denied one's (rls-lists.ts). */
  raw_body?: string;
}

export interface DeciderOptions {
  /** The reference's SHADOW_MODE: every limit decided and reported, the request always answered OK. */
  shadowMode?: boolean;
  /** Told what every limited descriptor's buckets said (the reference's statistics). */
  observe?: (outcomes: readonly Outcome[]) => void;
  /** A plan's rule by plan, route (the domain) and limit id: descriptors with a `plan` entry (docs/plans.md#envoy). */
  planRules?: PlanRules;
  /** The allow and deny lists (rls-lists.ts), asked before any descriptor is decided; absent: none. */
  lists?: ListChecker;
  now?: () => number;
}

export class RateLimitDecider {
  private readonly requests: RequestPlans;

  constructor(
    domains: Domains,
    private readonly engine: Engine,
    private readonly headerOptions: HeaderOptions,
    private readonly options: DeciderOptions = {},
  ) {
    this.requests = new RequestPlans(domains);
  }

  /** Throws RlsBadRequest for a request it cannot decide; never for a store failure, never for a refusal. */
  async shouldRateLimit(request: RlsRequestIn): Promise<RlsResponse> {
    return this.decided(this.requests.of(request));
  }

  /** The gRPC face's call: its message decoded (by `decode`), checked and planned only when its bytes were not seen lately. */
  shouldRateLimitMessage(bytes: Buffer, decode: (bytes: Uint8Array) => RlsRequestIn): Promise<RlsResponse> {
    let request: RequestPlan;
    try {
      request = this.requests.ofMessage(bytes, decode);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.decided(request);
  }

  private async decided(planned: RequestPlan): Promise<RlsResponse> {
    const { lists } = this.options;
    if (lists !== undefined && planned.listed !== undefined) {
      const action = listActionOf(lists, planned.listed, (this.options.now ?? Date.now)());
      if (action !== undefined) return listedResponse(action, planned.listed, this.options.shadowMode === true);
    }
    const selected = planned.selects && this.options.planRules ? withSelectedPlans(planned.planned, this.options.planRules) : undefined;
    const request = selected ? requestPlanOf(selected) : planned;
    const outcomes = await this.outcomesOf(request);
    const nowMs = (this.options.now ?? Date.now)();
    const statuses: RlsStatus[] = [];
    for (let i = 0; i < outcomes.length; i++) {
      const plan = request.planned[i];
      statuses.push(plan === undefined ? NO_LIMIT : plan === 'unlimited' ? UNLIMITED : statusOf(outcomes[i]!, nowMs));
    }
    const overall = this.options.shadowMode ? 'OK' : overallCode(request, statuses);
    this.options.observe?.(outcomes.filter((outcome): outcome is Outcome => outcome !== undefined));
    return { overall_code: overall, statuses, response_headers_to_add: responseHeaders(outcomes, statuses, overall, nowMs, this.headerOptions) };
  }

  private async outcomesOf(request: RequestPlan): Promise<(Outcome | undefined)[]> {
    const { plans } = request;
    const outcomes: (Outcome | undefined)[] = new Array(plans.length).fill(undefined);
    // Reports first, never refused: their answer then shows the bucket with the usage charged.
    await this.report(plans);
    const admitted = await this.decide(plans, request.main, outcomes);
    // quota_mode descriptors only once the others admitted the request, each on its own
    if (admitted && request.quota.length > 0) await Promise.all(request.quota.map((batch) => this.decide(plans, batch, outcomes)));
    const unlooked = plans.flatMap((plan, i) => (plan && outcomes[i] === undefined ? [i] : []));
    if (unlooked.length > 0) {
      const looked = await Promise.all(unlooked.map((i) => this.looked(plans[i]!)));
      unlooked.forEach((i, k) => {
        outcomes[i] = looked[k];
      });
    }
    return outcomes;
  }

  /** Decides a batch; fills its outcomes (a limit not consulted is left for a look). Whether admitted. */
  private async decide(plans: RequestPlan['plans'], batch: Batch, outcomes: (Outcome | undefined)[]): Promise<boolean> {
    if (batch.calls.length === 0) return true;
    const result = await this.engine.decideAll(batch.calls);
    for (let j = 0; j < batch.indexes.length; j++) {
      const mine = batch.slots[j]!;
      if (result.consulted && mine.some((k) => !result.consulted![k])) continue;
      const decisions = mine.map((k) => result.decisions[k]!);
      const i = batch.indexes[j]!;
      // A shadow_mode limit's would-be refusal is over: OK in its status, counted in over_limit and shadow_mode, as the reference counts it.
      outcomes[i] = { plan: plans[i]!, decisions, over: decisions.some((decision) => !decision.allowed || decision.shadowRefused === true) };
    }
    return result.allowed;
  }

  /** Charges each usage report's hits to its buckets (usage/report.ts): a debt past empty allowed. */
  private async report(plans: RequestPlan['plans']): Promise<void> {
    const charges: Promise<boolean>[] = [];
    for (const plan of plans) if (plan?.kind === 'report') for (const call of plan.calls) charges.push(chargeReport(this.engine, call, call.cost, 0, 'envoy'));
    if (charges.length > 0) await Promise.all(charges);
  }

  /** A descriptor not charged: its buckets as they are (the engine's peek), never counted. */
  private async looked(plan: DescriptorPlan): Promise<Outcome> {
    if (plan.kind === 'blocked') return { plan, decisions: [], over: true };
    const decisions: Decision[] = await Promise.all(plan.calls.map((call) => this.engine.peek(call.bucket, call.rule)));
    const over = plan.kind === 'impossible' || (plan.kind === 'decide' && decisions.some((decision) => !decision.allowed));
    return { plan, decisions, over };
  }
}

/** The statuses of a descriptor with no limit and of an unlimited one: the same every call. */
const NO_LIMIT: RlsStatus = Object.freeze({ code: 'OK' });
const UNLIMITED: RlsStatus = Object.freeze({ code: 'OK', limit_remaining: MAX_UINT32 });

/** OVER_LIMIT when a descriptor refuses, or when every quota_mode descriptor of the request is over. */
function overallCode({ plans, quotaIndexes }: RequestPlan, statuses: readonly RlsStatus[]): Code {
  for (let i = 0; i < plans.length; i++) if (plans[i] && !plans[i]!.quota && statuses[i]!.code === 'OVER_LIMIT') return 'OVER_LIMIT';
  return quotaIndexes.length > 0 && quotaIndexes.every((i) => statuses[i]!.code === 'OVER_LIMIT') ? 'OVER_LIMIT' : 'OK';
}
