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

/** The override's unit, in seconds (Envoy's RateLimitUnit; its WEEK too). */
export const OVERRIDE_UNIT_SECONDS: Readonly<Record<string, number>> = { SECOND: 1, MINUTE: 60, HOUR: 3600, DAY: 86_400, WEEK: 7 * 86_400, MONTH: 30 * 86_400, YEAR: 365 * 86_400 };
const UNIT_BY_NUMBER = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR', 'WEEK'];

/** Most hits one request may add: beyond any rule's capacity anyway. */
export const MAX_HITS = 1_000_000_000;

export interface Override {
  readonly requestsPerUnit: number;
  /** Envoy's name of the unit, e.g. `MINUTE`. */
  readonly unit: string;
}

export interface CheckedDescriptor {
  readonly entries: readonly Entry[];
  readonly override: Override | undefined;
  readonly hits: number;
}

export interface CheckedRequest {
  readonly domain: string;
  readonly descriptors: readonly CheckedDescriptor[];
}

export function checkRequest(request: RlsRequestIn): CheckedRequest {
  if (typeof request.domain !== 'string' || request.domain === '') throw new RlsBadRequest('domain', 'must not be empty');
  const descriptors = request.descriptors ?? [];
  if (descriptors.length === 0) throw new RlsBadRequest('descriptors', 'must list at least one descriptor');
  const requestHits = hitsOf(request.hits_addend ?? 0, 'hits_addend');
  return { domain: request.domain, descriptors: descriptors.map((descriptor, index) => checkDescriptor(descriptor, `descriptors[${index}]`, requestHits)) };
}

function checkDescriptor(descriptor: RlsDescriptorIn, field: string, requestHits: number): CheckedDescriptor {
  const entries = (descriptor.entries ?? []).map((entry, index) => {
    if (typeof entry.key !== 'string' || entry.key === '') throw new RlsBadRequest(`${field}.entries[${index}].key`, 'must not be empty');
    if (typeof entry.value !== 'string' || entry.value === '') throw new RlsBadRequest(`${field}.entries[${index}].value`, 'must not be empty');
    return { key: entry.key, value: entry.value };
  });
  if (entries.length === 0) throw new RlsBadRequest(`${field}.entries`, 'must list at least one entry');
  const own = descriptor.hits_addend;
  // Set, the descriptor's own hits_addend overrides the request's.
  const hits = own === undefined || own === null ? requestHits : hitsOf(Number(own.value ?? 0), `${field}.hits_addend`);
  return { entries, override: overrideOf(descriptor.limit, `${field}.limit`), hits };
}

/** 0 or unset: 1, as Envoy documents. */
function hitsOf(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 0 || value > MAX_HITS) throw new RlsBadRequest(field, `must be an integer from 0 to ${MAX_HITS}`);
  return value === 0 ? 1 : value;
}

function overrideOf(limit: RlsDescriptorIn['limit'], field: string): Override | undefined {
  if (limit === undefined || limit === null) return undefined;
  const unit = typeof limit.unit === 'number' ? UNIT_BY_NUMBER[limit.unit] : limit.unit;
  if (unit === undefined || OVERRIDE_UNIT_SECONDS[unit] === undefined) throw new RlsBadRequest(`${field}.unit`, `must be one of ${Object.keys(OVERRIDE_UNIT_SECONDS).join(', ')}`);
  const requestsPerUnit = limit.requests_per_unit ?? 0;
  if (!Number.isInteger(requestsPerUnit) || requestsPerUnit < 1 || requestsPerUnit > MAX_HITS) throw new RlsBadRequest(`${field}.requests_per_unit`, `must be an integer from 1 to ${MAX_HITS}`);
  return { requestsPerUnit, unit };
}
