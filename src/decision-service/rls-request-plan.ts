// A request's plan as the decider runs it, worked out once per distinct
// request: each descriptor's plan (rls-plan.ts) and the engine calls batched
// as rls.ts makes them: the limits that are not quota_mode together, each
// quota_mode one on its own, none when a limit refuses the request at once.
// The gRPC face keeps them by the message's bytes, so a request Envoy sends
// again is neither decoded, checked nor planned again (each of those made
// objects per call: docs/decision-service.md#measured).
import type { LimitCall } from '../limiter/engine/engine.js';
import { BoundedLru } from '../core/lru.js';
import type { Domains } from './descriptor-tree.js';
import { type DescriptorPlan, type Planned, planRequest } from './rls-plan.js';
import { type ListSubject, listSubjectOf } from './rls-lists.js';
import { checkRequest, type RlsRequestIn } from './rls-request.js';

/** Engine calls decided together, and the descriptors they came from. */
export interface Batch {
  readonly indexes: readonly number[];
  readonly calls: readonly LimitCall[];
  /** Per entry of `indexes`: the positions of that descriptor's calls in `calls`. */
  readonly slots: readonly (readonly number[])[];
}

export interface RequestPlan {
  readonly planned: readonly Planned[];
  /** Per descriptor: its plan when it has a limit. */
  readonly plans: readonly (DescriptorPlan | undefined)[];
  /** What is decided first: every limit that is not quota_mode. */
  readonly main: Batch;
  /** Once main admitted the request: each quota_mode limit on its own. */
  readonly quota: readonly Batch[];
  /** The quota_mode descriptors (OVER_LIMIT when all of them are). */
  readonly quotaIndexes: readonly number[];
  /** A descriptor selects a plan (rls-plan-select.ts): its rule is read at decision time. */
  readonly selects: boolean;
  /** What the allow and deny lists read of the request (rls-lists.ts); set by RequestPlans. */
  readonly listed?: ListSubject;
}

function batchOf(plans: RequestPlan['plans'], indexes: readonly number[]): Batch {
  const calls: LimitCall[] = [];
  const slots = indexes.map((i) => plans[i]!.calls.map((call) => calls.push(call) - 1));
  return { indexes, calls, slots };
}

export function requestPlanOf(planned: Planned[]): RequestPlan {
  const plans = planned.map((plan) => (typeof plan === 'object' ? plan : undefined));
  const refusedAtOnce = plans.some((plan) => plan && (plan.kind === 'blocked' || plan.kind === 'impossible') && !plan.shadow && !plan.quota);
  const deciding = (quota: boolean) => (refusedAtOnce ? [] : plans.flatMap((plan, i) => (plan?.kind === 'decide' && plan.quota === quota ? [i] : [])));
  return {
    planned,
    plans,
    main: batchOf(plans, deciding(false)),
    quota: deciding(true).map((i) => batchOf(plans, [i])),
    quotaIndexes: plans.flatMap((plan, i) => (plan?.quota ? [i] : [])),
    selects: plans.some((plan) => plan?.selector !== undefined),
  };
}

/** How many request plans a decider keeps, and the longest message kept by its bytes (longer ones are planned every time). */
export const RECENT_REQUESTS = 10_000;
export const MAX_KEPT_MESSAGE_BYTES = 512;

/** The request plans of one loaded config: a reload builds a new decider, so no plan outlives its config. */
export class RequestPlans {
  private readonly kept = new BoundedLru<string, RequestPlan>(RECENT_REQUESTS);

  constructor(private readonly domains: Domains) {}

  get size(): number {
    return this.kept.size;
  }

  of(request: RlsRequestIn): RequestPlan {
    const checked = checkRequest(request);
    return { ...requestPlanOf(planRequest(this.domains, checked)), listed: listSubjectOf(checked) };
  }

  /** By the message's bytes: the same bytes always decode to the same request. A message that cannot be decided throws and is not kept. */
  ofMessage(bytes: Buffer, decode: (bytes: Uint8Array) => RlsRequestIn): RequestPlan {
    if (bytes.length > MAX_KEPT_MESSAGE_BYTES) return this.of(decode(bytes));
    const key = bytes.toString('latin1');
    let plan = this.kept.peek(key);
    if (plan === undefined) {
      plan = this.of(decode(bytes));
      this.kept.set(key, plan);
    }
    return plan;
  }
}
