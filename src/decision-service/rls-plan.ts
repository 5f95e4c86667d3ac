// What each descriptor of a request is decided by: the configured limit it
// lands on (or its override), after `replaces`, with the bucket every Sluice
// instance shares for it: `~rls.` + a hash of domain, entries and override, so
// no descriptor value reaches a key and no bucket meets a gateway bucket. A
// `share_threshold` wildcard puts its pattern in the hash instead of the value,
// so every value it matches shares one bucket.
import { createHash } from 'node:crypto';
import type { LimitCall } from '../limiter/engine/engine.js';
import type { CalendarSpec } from '../core/calendar.js';
import { derivedId } from '../core/ids.js';
import { BoundedLru } from '../core/lru.js';
import { capacityOf, type Rule } from '../policies/rule.js';
import { type ConfiguredLimit, type DescriptorLevel, type Domains, type Match, matchDescriptor } from './descriptor-tree.js';
import { fixedWindow, headerIdOf } from './envoy-limit.js';
import { UNIT_SECONDS } from './envoy-schema.js';
import { overrideStatKey, statKeyOf } from './rls-stat-key.js';
import { PLAN_ENTRY, type PlanRules, type PlanSelector, planSelectorOf, selectedRule, TENANT_ENTRY } from './rls-plan-select.js';
import { windowSeconds } from '../http/headers.js';
import { type CheckedDescriptor, type CheckedRequest, OVERRIDE_UNIT_SECONDS } from './rls-request.js';

/** What Envoy is told the limit is (current_limit). */
export interface ReportedLimit {
  readonly name: string | undefined;
  readonly requestsPerUnit: number;
  /** Envoy's unit name, e.g. `MINUTE`. */
  readonly unit: string;
}

/**
 * How a descriptor is answered: `decide` through the engine with the others;
 * `check` (its own hits_addend 0) by a look at its buckets, never refused;
 * `impossible` (more hits than a rule can ever hold) and `blocked`
 * (requests_per_unit 0) refused without counting; `report` (a usage report:
 * `sluice_usage: report`) its hits charged through the engine's adjust, a
 * debt past empty allowed, never refused.
 */
export type PlanKind = 'decide' | 'check' | 'impossible' | 'blocked' | 'report';

export interface DescriptorPlan {
  readonly kind: PlanKind;
  readonly reported: ReportedLimit;
  readonly headerId: string;
  /** One call per rule of the limit, in order; none when blocked. */
  readonly calls: LimitCall[];
  /** shadow_mode: answered OK whatever its buckets say. */
  readonly shadow: boolean;
  /** quota_mode: refuses the request only with every other quota descriptor. */
  readonly quota: boolean;
  /** The unit's length: a blocked limit's reset is the end of its current unit. */
  readonly unitSeconds: number;
  /** With decisionService.calendarUnits, a MONTH or YEAR unit's calendar: where that unit ends instead. */
  readonly calendar?: CalendarSpec;
  /** The reference's statistics key (rls-stat-key.ts), built only when statistics are kept. */
  readonly statKey: () => string;
  /** Hits the request adds (its own hits_addend or the request's). */
  readonly hits: number;
  /** A `plan` or `tenant` entry (rls-plan-select.ts): its rule is read at decision time. */
  readonly selector?: PlanSelector;
}

/** Per descriptor: its plan, `unlimited`, or undefined where no limit applies (unknown or replaced). */
export type Planned = DescriptorPlan | 'unlimited' | undefined;

export function planRequest(domains: Domains, request: CheckedRequest): Planned[] {
  const top = domains.get(request.domain);
  if (top === undefined) return request.descriptors.map(() => undefined);
  const own = request.descriptors.map((descriptor) => ownPlan(domains, top, request.domain, descriptor));
  const replaced = new Set(own.flatMap(({ match }) => match?.limit.replaces ?? []));
  return own.map(({ match, plan }): Planned => (match?.limit.name !== undefined && replaced.has(match.limit.name) ? undefined : plan));
}

/** A descriptor's plan before `replaces`, and the configured limit it matched (none for an override). */
interface OwnPlan {
  readonly match: Match | undefined;
  readonly plan: Planned;
}

/**
 * The plans of the descriptors seen lately, per loaded config: Envoy asks about
 * the same few descriptors again and again, and a plan (its bucket's hash
 * above all) depends on nothing else. Bounded, so random values cannot grow it.
 */
const recentPlans = new WeakMap<Domains, BoundedLru<string, OwnPlan>>();
export const RECENT_PLANS = 10_000;

/** How many plans are kept for this config (tests: the bound holds). */
export const plansKept = (domains: Domains): number => recentPlans.get(domains)?.size ?? 0;

function ownPlan(domains: Domains, top: DescriptorLevel, domain: string, descriptor: CheckedDescriptor): OwnPlan {
  let recent = recentPlans.get(domains);
  if (recent === undefined) {
    recent = new BoundedLru(RECENT_PLANS);
    recentPlans.set(domains, recent);
  }
  const override = descriptor.override;
  const key = JSON.stringify([domain, descriptor.hits, descriptor.report, override ? [override.requestsPerUnit, override.unit] : null, ...descriptor.entries.map((entry) => [entry.key, entry.value])]);
  let own = recent.peek(key);
  if (own === undefined) {
    own = planOf(top, domain, descriptor);
    recent.set(key, own);
  }
  return own;
}

function planOf(top: DescriptorLevel, domain: string, descriptor: CheckedDescriptor): OwnPlan {
  if (descriptor.override) return { match: undefined, plan: overridePlan(domain, descriptor) };
  const match = matchDescriptor(top, descriptor.entries);
  const selector = planSelectorOf(domain, descriptor, match);
  if (match === undefined) return { match, plan: selector ? alonePlan(selector, descriptor.hits, descriptor.report) : undefined };
  if (match.limit.unlimited) return { match, plan: 'unlimited' };
  const plan = configuredPlan(domain, descriptor, match);
  return { match, plan: selector ? { ...plan, selector } : plan };
}

function configuredPlan(domain: string, descriptor: CheckedDescriptor, match: Match): DescriptorPlan {
  const limit: ConfiguredLimit = match.limit;
  const reported = { name: limit.name, requestsPerUnit: limit.requestsPerUnit, unit: limit.unit.toUpperCase() };
  const tag = bucketTag(domain, descriptor, undefined, match.sharedValues);
  const statKey = () => statKeyOf(domain, descriptor.entries, match);
  const own = { reported, headerId: limit.headerId, shadow: limit.shadow, quota: limit.quotaMode, unitSeconds: UNIT_SECONDS[limit.unit], calendar: limit.calendar, statKey, hits: descriptor.hits };
  return withCalls(own, tag, { rules: limit.rules, cost: descriptor.hits, blocked: limit.blocked, report: descriptor.report });
}

/** Envoy's per-descriptor `limit`: the reference's fixed window with the given numbers. */
function overridePlan(domain: string, descriptor: CheckedDescriptor): DescriptorPlan {
  const override = descriptor.override!;
  const reported = { name: undefined, requestsPerUnit: override.requestsPerUnit, unit: override.unit };
  const unitSeconds = OVERRIDE_UNIT_SECONDS[override.unit]!;
  const blocked = override.requestsPerUnit === 0;
  const rules = blocked ? [] : [fixedWindow(override.requestsPerUnit, unitSeconds)];
  const lastKey = descriptor.entries[descriptor.entries.length - 1]?.key ?? '';
  const own = { reported, headerId: headerIdOf(lastKey), shadow: false, quota: false, unitSeconds, statKey: () => overrideStatKey(domain, descriptor.entries), hits: descriptor.hits };
  return withCalls(own, bucketTag(domain, descriptor, override, []), { rules, cost: descriptor.hits, blocked, report: descriptor.report });
}

type PlanBase = Omit<DescriptorPlan, 'kind' | 'calls'>;

/** A descriptor's rules, its hits (the cost) and whether it is blocked or only reports usage. */
interface DescriptorRules {
  readonly rules: readonly Rule[];
  readonly cost: number;
  readonly blocked: boolean;
  readonly report: boolean;
}

function withCalls(base: PlanBase, tag: string, { rules, cost, blocked, report }: DescriptorRules): DescriptorPlan {
  const calls = rules.map((rule, index) => ({ bucket: { tag, name: `r${index}` }, rule, cost }));
  const kind: PlanKind = report ? 'report' : cost === 0 ? 'check' : blocked ? 'blocked' : rules.some((rule) => cost > capacityOf(rule)) ? 'impossible' : 'decide';
  return { ...base, kind, calls };
}

/** `~rls.` + 128 bits of SHA-256 over domain, entries (a shared wildcard for its values) and override: the raw values never reach a key. */
export function bucketTag(domain: string, descriptor: CheckedDescriptor, override: CheckedDescriptor['override'], sharedValues: readonly (string | undefined)[]): string {
  const entries = descriptor.entries.map((entry, i) => (sharedValues[i] === undefined ? [entry.key, entry.value] : [entry.key, sharedValues[i], 'shared']));
  const identity = JSON.stringify([domain, entries, override ? [override.requestsPerUnit, override.unit] : null]);
  return derivedId('rls.', createHash('sha256').update(identity).digest('hex').slice(0, 32));
}

/** A descriptor with a plan or tenant entry and no configured limit: decided only if a rule is selected. */
function alonePlan(selector: PlanSelector, hits: number, report: boolean): DescriptorPlan {
  const entry = selector.tenant === undefined ? PLAN_ENTRY : TENANT_ENTRY;
  return {
    kind: report ? 'report' : 'decide',
    reported: { name: undefined, requestsPerUnit: 0, unit: 'SECOND' },
    // A plan's name may be shown to the client; a tenant's id is not put in a header.
    headerId: selector.tenant === undefined ? selector.plan!.replace(/[^A-Za-z0-9._~@+-]/g, '_').slice(0, 64) || 'plan' : TENANT_ENTRY,
    calls: [],
    shadow: false,
    quota: false,
    unitSeconds: 1,
    statKey: () => `${selector.domain}.${entry}`,
    hits,
    selector,
  };
}

/** The descriptors' plans with each selected rule in; `undefined` when the request selects none that exists. */
export function withSelectedPlans(planned: readonly Planned[], rules: PlanRules): Planned[] | undefined {
  let changed = false;
  const out = planned.map((plan): Planned => {
    if (typeof plan !== 'object' || plan.selector === undefined) return plan;
    const { selector } = plan;
    const resolved = selectedRule(selector, rules);
    if (resolved === undefined) {
      if (!selector.alone) return plan;
      changed = true;
      return undefined;
    }
    changed = true;
    return planned1(plan, resolved.rule);
  });
  return changed ? out : undefined;
}

function planned1(plan: DescriptorPlan, rule: Rule): DescriptorPlan {
  const cost = plan.hits;
  const seconds = windowSeconds(rule);
  const unit = (Object.keys(UNIT_SECONDS) as (keyof typeof UNIT_SECONDS)[]).find((name) => UNIT_SECONDS[name] >= seconds) ?? 'year';
  const kind = plan.kind === 'report' ? 'report' : cost === 0 ? 'check' : cost > capacityOf(rule) ? 'impossible' : 'decide';
  return {
    ...plan,
    kind,
    reported: { name: plan.reported.name, requestsPerUnit: capacityOf(rule), unit: unit.toUpperCase() },
    unitSeconds: UNIT_SECONDS[unit],
    calls: [{ bucket: { tag: plan.selector!.tag, name: 'r0' }, rule, cost }],
  };
}
