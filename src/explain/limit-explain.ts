// One limit as explain shows it: applies, shadow (counted, never refuses) or
// skipped and why; the key it counts by (tenant, client address, header
// hash), the rule and where it came from, and the bucket's Redis key as the
// limiter builds it (bucketsOf / redisKeyOf for rate limits, slotKey for
// concurrency ones). Raw header values and API keys never appear: only ids.
import { bucketKey, slotKey } from '../core/ids.js';
import type { Rule } from '../policies/rule.js';
import { bucketsOf } from '../limiter/engine/plan.js';
import type { LimitTrace, RuleFrom } from '../request-limits/request-limits.js';
import type { ConcurrencyLimitConfig, KeySourceName, LimitConfig } from '../request-limits/types.js';
import type { OverrideSet, RuleMatch } from '../rules/types.js';
import { fieldOf, redisKeyOf } from '../stores/redis/scripts.js';

/** Why a limit is not decided for the request. */
export type SkipReason =
  /** A tenant-keyed global limit: an anonymous route has no tenant, so it is not applied there. */
  | 'anonymous_route'
  /** A claim-keyed global limit: a route without `auth: jwt` has no claims, so it is not applied there. */
  | 'route_without_auth'
  /** No API key: the request is refused (401) before any limit. */
  | 'missing_api_key'
  /** An API key no key table knows (`unknownKeys: reject`): 401 before any limit. */
  | 'unknown_api_key'
  /** The API key header sent twice or holding a list: 400 before any limit. */
  | 'duplicate_api_key'
  /** A Content-Length over `limits.maxBodyBytes`: 413 before any limit. */
  | 'body_too_large'
  /** A `key: { header }` limit and the request lacks the header (400). */
  | 'missing_limit_header'
  /** A `key: { claim }` limit and the verified token lacks the claim (401). */
  | 'missing_limit_claim'
  /** A `key: { body }` limit and the request's JSON body lacks the field (400). */
  | 'missing_limit_field'
  /** A route with `auth: jwt` and the token is missing or fails a check (401): refused before any limit. */
  | 'invalid_token'
  /** A route with `auth: jwt` and its JWK set cannot be fetched in time (503): refused before any limit. */
  | 'auth_unavailable'
  /** An ip or tenant+ip limit and no client address (the connection is gone; here: no `ip` given). */
  | 'no_client_address'
  /** The rule from the store or an override holds fewer units than the route's cost (503). */
  | 'cost_exceeds_capacity'
  /** Another limit of the request refuses it first: this one is not decided. */
  | 'request_refused';

export interface RuleSource {
  /** config: the limit's own `rule:` in the file or the file's `rules:`; rule-store: a stored rule; override: a per-key override; default-rule: `defaultRule`. */
  from: 'config' | 'rule-store' | 'override' | 'plan' | 'default-rule';
  /** Which tenant × route rule matched (rule-store, config rules). */
  match?: Exclude<RuleMatch, 'default'>;
  /** The plan whose limit applied (from `plan`: docs/plans.md). */
  plan?: string;
  /** The override's selector (`tenant:ID`, `ip:ADDRESS[/LEN]`, `header:~h.…`). */
  selector?: string;
}

export interface BucketLocation {
  /** The hash tag and name: the bucket is `rl:{tag}:name`. */
  tag: string;
  name: string;
  /** The Redis key the limiter reads and writes; with `field`, a field of that hash. */
  redisKey: string;
  field?: string;
  /** A sharded rule's sub-buckets (each request takes one at random). */
  shards?: { redisKey: string; field?: string }[];
}

export interface BucketState {
  remaining: number;
  limit: number;
  /** Until the bucket is full (or the window ends) again, ms. */
  resetAfterMs: number;
  /** 0 while one unit would be admitted now. */
  retryAfterMs: number;
  ttlMs?: number;
  location: string;
}

export interface LimitExplanation {
  id: string;
  kind: 'rate' | 'concurrency';
  /** From `globalLimits:`. */
  global: boolean;
  keyedBy: KeySourceName;
  /** The header a `key: { header }` limit reads. */
  header?: string;
  /** The claim a `key: { claim }` limit counts by. */
  claim?: string;
  status: 'applies' | 'shadow' | 'skipped';
  reason?: SkipReason;
  why: string;
  /** Who the bucket belongs to: the tenant, the client's address, the header value's hash. */
  key?: { tenant?: string; ip?: string; headerHash?: string; claimHash?: string };
  rule?: Rule;
  /** A concurrency limit's most open at once. */
  max?: number;
  source?: RuleSource;
  bucket?: BucketLocation;
  /** On a running instance: the bucket now, read by a peek that charges nothing. */
  state?: BucketState | { error: string };
}

interface LimitContext {
  global: boolean;
  ruleStore: boolean;
  overrides: OverrideSet | undefined;
}

export function explainLimit(trace: LimitTrace, context: LimitContext): LimitExplanation {
  const out = headOf(trace.limit, trace.kind, context.global);
  if (trace.bucket) {
    const { tenant, ip, headerId } = trace.bucket;
    const own = out.keyedBy === 'tenant' || out.keyedBy === 'tenant+ip';
    // A claim's bucket tag is its value's hash (request-limits.ts bucketOf), as a header's is: the value itself never appears.
    const claimHash = out.keyedBy === 'claim' ? trace.bucket.tag : undefined;
    out.key = { ...(tenant !== undefined && own ? { tenant } : {}), ...(ip ? { ip: ip.address } : {}), ...(headerId ? { headerHash: headerId } : {}), ...(claimHash ? { claimHash } : {}) };
    out.bucket = trace.kind === 'rate' ? locate(trace.bucket.tag, trace.bucket.name, trace.rule!) : { tag: trace.bucket.tag, name: trace.bucket.name, redisKey: slotKey(trace.bucket.tag, trace.bucket.name) };
  }
  if (trace.rule) {
    out.rule = trace.rule;
    out.source = sourceOf(trace, trace.rule, context);
  } else if ('rule' in trace.limit && trace.limit.rule !== undefined) {
    // No bucket, so no override could be looked up: the limit's own rule is what it would have had without one.
    out.rule = trace.limit.rule;
  }
  if ('max' in trace.limit) out.max = trace.limit.max;
  if (trace.problem) return skip(out, trace.problem, problemWhy(trace, out));
  if (trace.rule?.shadow === true) {
    out.status = 'shadow';
    out.why = 'shadow mode: counted, and its would-be refusals logged and counted, but it never refuses';
  } else out.why = keyWhy(out);
  return out;
}

/** A limit the request never reaches (a key problem, an anonymous route). */
export function skippedLimit(limit: LimitConfig | ConcurrencyLimitConfig, global: boolean, reason: SkipReason): LimitExplanation {
  const out = headOf(limit, 'max' in limit ? 'concurrency' : 'rate', global);
  if ('max' in limit) out.max = limit.max;
  else if (limit.rule) out.rule = limit.rule;
  const why: Partial<Record<SkipReason, string>> = {
    anonymous_route: `a ${out.keyedBy}-keyed global limit is not applied to an anonymous route: it has no tenant`,
    route_without_auth: 'a claim-keyed global limit is not applied to a route without auth: jwt: it has no claims',
    missing_api_key: 'not decided: the request has no API key and is refused first',
    unknown_api_key: 'not decided: the API key is unknown (or revoked) and the request is refused first',
    duplicate_api_key: 'not decided: the API key header is sent more than once and the request is refused first',
    body_too_large: 'not decided: the Content-Length is over limits.maxBodyBytes and the request is refused first (413)',
    invalid_token: 'not decided: the token is missing or fails a check and the request is refused first (401)',
    auth_unavailable: 'not decided: the JWK set cannot be fetched in time and the request is refused first (503)',
  };
  return skip(out, reason, why[reason] ?? reason);
}

function headOf(limit: LimitConfig | ConcurrencyLimitConfig, kind: 'rate' | 'concurrency', global: boolean): LimitExplanation {
  return { id: limit.id, kind, global, keyedBy: limit.key.kind, ...(limit.key.kind === 'header' ? { header: limit.key.header } : {}), ...(limit.key.kind === 'claim' ? { claim: limit.key.claim } : {}), status: 'applies', why: '' };
}

function skip(out: LimitExplanation, reason: SkipReason, why: string): LimitExplanation {
  out.status = 'skipped';
  out.reason = reason;
  out.why = why;
  return out;
}

function problemWhy(trace: LimitTrace, out: LimitExplanation): string {
  switch (trace.problem) {
    case 'missing_limit_header':
      return `keyed by header ${out.header}, which the request lacks`;
    case 'missing_limit_claim':
      return `keyed by claim ${out.claim}, which the token lacks`;
    case 'no_client_address':
      return 'keyed by the client address, and there is none (give the peer address: ip)';
    case 'missing_limit_field':
      return "keyed by a field of the request's JSON body, which explain does not read";
    default:
      return `the route's cost is more than the ${out.source?.from ?? ''} rule's capacity: no request can pass (503)`;
  }
}

function keyWhy(out: LimitExplanation): string {
  const by: Record<KeySourceName, string> = {
    tenant: `counted per tenant (${out.key?.tenant})`,
    ip: `counted per client address (${out.key?.ip})`,
    header: `counted per value of header ${out.header} (hashed: ${out.key?.headerHash})`,
    claim: `counted per value of claim ${out.claim} (hashed: ${out.key?.claimHash})`,
    route: 'one bucket for the route, whoever asks',
    'tenant+ip': `counted per tenant (${out.key?.tenant}) and client address (${out.key?.ip})`,
    body: `counted per tenant (${out.key?.tenant}) and a field of the JSON body`,
  };
  return by[out.keyedBy];
}

/** The bucket's key as the engine builds it (plan.ts planFor, for shards too). */
function locate(tag: string, name: string, rule: Rule): BucketLocation {
  const bucket = bucketKey(tag, name);
  const out: BucketLocation = { tag, name, ...where(rule, bucket) };
  if (rule.shards !== undefined) out.shards = bucketsOf(bucket, rule).map((shard) => where(rule, shard));
  return out;
}

function where(rule: Rule, bucket: ReturnType<typeof bucketKey>): { redisKey: string; field?: string } {
  const field = fieldOf(rule.policy, bucket);
  return { redisKey: redisKeyOf(rule.policy, bucket), ...(field === '' ? {} : { field }) };
}

function sourceOf(trace: LimitTrace, rule: Rule, context: LimitContext): RuleSource {
  const from = trace.from as RuleFrom;
  const limitId = trace.limit.id;
  if (from === 'override') {
    // The stored override whose rule the index gave: its selector says which key it is for.
    const stored = [...(context.overrides?.stored.values() ?? [])].find((entry) => entry.limitId === limitId && entry.rule === rule);
    return { from: 'override', ...(stored ? { selector: stored.selector } : {}) };
  }
  if (from === 'limit') return { from: 'config' };
  if (from === 'default') return { from: 'default-rule' };
  if (from === 'plan') return { from: 'plan', ...(trace.plan === undefined ? {} : { plan: trace.plan }) };
  return { from: context.ruleStore ? 'rule-store' : 'config', match: from };
}
