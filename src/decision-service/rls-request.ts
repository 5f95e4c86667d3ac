// A RateLimitRequest as @grpc/proto-loader hands it over (field names as in the
// .proto, enums as strings, unset fields absent), checked and normalised. The
// /json endpoint converts its body to the same shape first (json-mapping.ts).
import type { Entry } from './descriptor-tree.js';

export interface RlsDescriptorIn {
  entries?: { key?: string; value?: string }[];
  limit?: { requests_per_unit?: number; unit?: string | number } | null;
  hits_addend?: { value?: number | string } | null;
}

export interface RlsRequestIn {
  domain?: string;
  descriptors?: RlsDescriptorIn[];
  hits_addend?: number;
}

/** A request the service refuses to decide: gRPC INVALID_ARGUMENT, HTTP 400. */
export class RlsBadRequest extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/**
 * What the reference answers with an error rather than a response (an empty
 * domain, no descriptors): gRPC UNKNOWN with the reference's message, as Envoy
 * sees it from the reference; HTTP 400.
 */
export class RlsServiceError extends RlsBadRequest {}

/** The override's unit, in seconds (Envoy's RateLimitUnit; its WEEK too). */
export const OVERRIDE_UNIT_SECONDS: Readonly<Record<string, number>> = { SECOND: 1, MINUTE: 60, HOUR: 3600, DAY: 86_400, WEEK: 7 * 86_400, MONTH: 30 * 86_400, YEAR: 365 * 86_400 };
const UNIT_BY_NUMBER = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR', 'WEEK'];

/** Most requests_per_unit an override may set: Sluice's largest limit. */
export const MAX_OVERRIDE = 1_000_000_000;

export interface Override {
  readonly requestsPerUnit: number;
  /** Envoy's name of the unit, e.g. `MINUTE`. */
  readonly unit: string;
}

export interface CheckedDescriptor {
  readonly entries: readonly Entry[];
  readonly override: Override | undefined;
  /** 0: the descriptor's own `hits_addend: 0`, checked without counting. */
  readonly hits: number;
  /** It carried `sluice_usage: report` (removed from `entries`): a usage report, its hits charged without refusing. */
  readonly report: boolean;
}

/**
 * The entry that marks a descriptor as a usage report: Envoy's second call of
 * a `rate_limits` entry with `apply_on_stream_done`, whose `hits_addend` is
 * what the answer used (docs/decision-service.md#usage-reports). The protocol
 * cannot tell that call from a request's, so the route's config adds this
 * entry (a `generic_key` action) to say so.
 */
export const USAGE_REPORT_KEY = 'sluice_usage';
export const USAGE_REPORT_VALUE = 'report';

export interface CheckedRequest {
  readonly domain: string;
  readonly descriptors: readonly CheckedDescriptor[];
}

export function checkRequest(request: RlsRequestIn): CheckedRequest {
  if (typeof request.domain !== 'string' || request.domain === '') throw new RlsServiceError('domain', 'rate limit domain must not be empty');
  const descriptors = request.descriptors ?? [];
  if (descriptors.length === 0) throw new RlsServiceError('descriptors', 'rate limit descriptor list must not be empty');
  // 0 or unset: 1, as Envoy documents.
  const requestHits = hitsOf(request.hits_addend ?? 0, 'hits_addend') || 1;
  return { domain: request.domain, descriptors: descriptors.map((descriptor, index) => checkDescriptor(descriptor, `descriptors[${index}]`, requestHits)) };
}

function checkDescriptor(descriptor: RlsDescriptorIn, field: string, requestHits: number): CheckedDescriptor {
  // An empty value (Envoy allows it) matches as the reference matches it: a
  // wildcard or the key-only node; no entries at all match nothing.
  const all = (descriptor.entries ?? []).map((entry) => ({ key: entry.key ?? '', value: entry.value ?? '' }));
  const marker = all.findIndex((entry) => entry.key === USAGE_REPORT_KEY);
  if (marker >= 0 && all[marker]!.value !== USAGE_REPORT_VALUE) throw new RlsBadRequest(`${field}.entries[${marker}].value`, `must be ${USAGE_REPORT_VALUE}`);
  // The marker is not part of the descriptor's identity: the report lands on the bucket the request's own call charged.
  const entries = marker < 0 ? all : all.filter((entry) => entry.key !== USAGE_REPORT_KEY);
  const own = descriptor.hits_addend;
  // Set, the descriptor's own hits_addend overrides the request's; 0 there checks without counting.
  const hits = own === undefined || own === null ? requestHits : hitsOf(Number(own.value ?? 0), `${field}.hits_addend`);
  return { entries, override: overrideOf(descriptor.limit, `${field}.limit`), hits, report: marker >= 0 };
}

/** Any count Envoy can send (a uint64 read as a number): above a limit's capacity it is refused, never an error. */
function hitsOf(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    if (Number.isInteger(value) && value > 0) return Number.MAX_SAFE_INTEGER;
    throw new RlsBadRequest(field, 'must be a non-negative integer');
  }
  return value;
}

function overrideOf(limit: RlsDescriptorIn['limit'], field: string): Override | undefined {
  if (limit === undefined || limit === null) return undefined;
  const unit = typeof limit.unit === 'number' ? UNIT_BY_NUMBER[limit.unit] : limit.unit;
  if (unit === undefined || OVERRIDE_UNIT_SECONDS[unit] === undefined) throw new RlsBadRequest(`${field}.unit`, `must be one of ${Object.keys(OVERRIDE_UNIT_SECONDS).join(', ')}`);
  // 0 is the reference's "refuse every request" (OVER_LIMIT), not an error.
  const requestsPerUnit = limit.requests_per_unit ?? 0;
  if (!Number.isInteger(requestsPerUnit) || requestsPerUnit < 0 || requestsPerUnit > MAX_OVERRIDE) throw new RlsBadRequest(`${field}.requests_per_unit`, `must be an integer from 0 to ${MAX_OVERRIDE}`);
  return { requestsPerUnit, unit };
}
