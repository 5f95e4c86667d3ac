// What each descriptor of a request is decided by: the configured limit it
// lands on (or its override), after `replaces`, with the bucket every Sluice
// instance shares for it: `~rls.` + a hash of domain, entries and override, so
// no descriptor value reaches a key and no bucket meets a gateway bucket.
import { createHash } from 'node:crypto';
import type { LimitCall } from '../limiter/engine.js';
import { derivedId } from '../core/ids.js';
import { capacityOf, type Rule } from '../core/rule.js';
import { type ConfiguredLimit, type Domains, findLimit } from './descriptor-tree.js';
import { fixedWindow, headerIdOf } from './envoy-limit.js';
import { type CheckedDescriptor, type CheckedRequest, OVERRIDE_UNIT_SECONDS } from './rls-request.js';

/** What Envoy is told the limit is (current_limit). */
export interface ReportedLimit {
  readonly name: string | undefined;
  readonly requestsPerUnit: number;
  /** Envoy's unit name, e.g. `MINUTE`. */
  readonly unit: string;
}

export interface DescriptorPlan {
  readonly reported: ReportedLimit;
  readonly headerId: string;
  /** One call per rule of the limit, in order. */
  readonly calls: LimitCall[];
  /** A cost above a rule's capacity: can never pass, so nothing is decided. */
  readonly impossible: boolean;
}

/** One plan per descriptor; undefined where no limit applies (unknown, unlimited or replaced). */
export function planRequest(domains: Domains, request: CheckedRequest): (DescriptorPlan | undefined)[] {
  const top = domains.get(request.domain);
  if (top === undefined) return request.descriptors.map(() => undefined);
  const matched = request.descriptors.map((descriptor) => (descriptor.override ? undefined : findLimit(top, descriptor.entries)));
  const replaced = new Set(matched.flatMap((limit) => limit?.replaces ?? []));
  return request.descriptors.map((descriptor, index) => {
    if (descriptor.override) return overridePlan(request.domain, descriptor);
    const limit = matched[index];
    if (limit === undefined || limit.unlimited) return undefined;
    if (limit.name !== undefined && replaced.has(limit.name)) return undefined;
    return configuredPlan(request.domain, descriptor, limit);
  });
}

function configuredPlan(domain: string, descriptor: CheckedDescriptor, limit: ConfiguredLimit): DescriptorPlan {
  const reported = { name: limit.name, requestsPerUnit: limit.requestsPerUnit, unit: limit.unit.toUpperCase() };
  return withCalls(reported, limit.headerId, bucketTag(domain, descriptor, undefined), limit.rules, descriptor.hits);
}

/** Envoy's per-descriptor `limit`: the reference's fixed window with the given numbers. */
function overridePlan(domain: string, descriptor: CheckedDescriptor): DescriptorPlan {
  const override = descriptor.override!;
  const reported = { name: undefined, requestsPerUnit: override.requestsPerUnit, unit: override.unit };
  const rule = fixedWindow(override.requestsPerUnit, OVERRIDE_UNIT_SECONDS[override.unit]!);
  return withCalls(reported, headerIdOf(descriptor.entries[descriptor.entries.length - 1]!.key), bucketTag(domain, descriptor, override), [rule], descriptor.hits);
}

function withCalls(reported: ReportedLimit, headerId: string, tag: string, rules: readonly Rule[], cost: number): DescriptorPlan {
  const calls = rules.map((rule, index) => ({ tag, name: `r${index}`, rule, cost }));
  return { reported, headerId, calls, impossible: rules.some((rule) => cost > capacityOf(rule)) };
}

/** `~rls.` + 128 bits of SHA-256 over domain, entries and override: the raw values never reach a key. */
export function bucketTag(domain: string, descriptor: CheckedDescriptor, override: CheckedDescriptor['override']): string {
  const identity = JSON.stringify([domain, descriptor.entries.map((entry) => [entry.key, entry.value]), override ? [override.requestsPerUnit, override.unit] : null]);
  return derivedId('rls.', createHash('sha256').update(identity).digest('hex').slice(0, 32));
}
