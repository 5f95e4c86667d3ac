// /json: a RateLimitRequest in proto3's JSON mapping (lowerCamelCase names, the
// .proto's names accepted too, enums by name or number, 64-bit integers as
// numbers or strings) to the shape the gRPC face gets, and a RateLimitResponse
// back to JSON (lowerCamelCase, default values left out, Duration as "12s").
import type { RlsResponse } from './rls.js';
import { RlsBadRequest, type RlsDescriptorIn, type RlsRequestIn } from './rls-request.js';

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** `hitsAddend` or `hits_addend`, whichever is present. */
function field(object: Json, camel: string, snake: string): unknown {
  return object[camel] ?? object[snake];
}

function integer(value: unknown, name: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  const number = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) throw new RlsBadRequest(name, 'must be a non-negative integer');
  return number;
}

function text(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RlsBadRequest(name, 'must be a string');
  return value;
}

function list(value: unknown, name: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new RlsBadRequest(name, 'must be an array');
  return value;
}

function object(value: unknown, name: string): Json {
  if (!isObject(value)) throw new RlsBadRequest(name, 'must be an object');
  return value;
}

export function requestFromJson(body: unknown): RlsRequestIn {
  const root = object(body, 'body');
  const descriptors = list(root.descriptors, 'descriptors').map((item, index) => descriptorFromJson(object(item, `descriptors[${index}]`), `descriptors[${index}]`));
  const out: RlsRequestIn = { descriptors };
  const domain = text(root.domain, 'domain');
  if (domain !== undefined) out.domain = domain;
  const hits = integer(field(root, 'hitsAddend', 'hits_addend'), 'hitsAddend');
  if (hits !== undefined) out.hits_addend = hits;
  return out;
}

function descriptorFromJson(descriptor: Json, at: string): RlsDescriptorIn {
  const entries = list(descriptor.entries, `${at}.entries`).map((item, index) => {
    const entry = object(item, `${at}.entries[${index}]`);
    return { key: text(entry.key, `${at}.entries[${index}].key`) ?? '', value: text(entry.value, `${at}.entries[${index}].value`) ?? '' };
  });
  const out: RlsDescriptorIn = { entries };
  if (descriptor.limit !== undefined && descriptor.limit !== null) {
    const limit = object(descriptor.limit, `${at}.limit`);
    const unit = limit.unit;
    if (unit !== undefined && typeof unit !== 'string' && typeof unit !== 'number') throw new RlsBadRequest(`${at}.limit.unit`, 'must be a unit name or number');
    out.limit = { requests_per_unit: integer(field(limit, 'requestsPerUnit', 'requests_per_unit'), `${at}.limit.requestsPerUnit`) ?? 0, unit: unit ?? 'UNKNOWN' };
  }
  const hits = integer(field(descriptor, 'hitsAddend', 'hits_addend'), `${at}.hitsAddend`);
  if (hits !== undefined) out.hits_addend = { value: hits };
  return out;
}

export function responseToJson(response: RlsResponse): Json {
  const out: Json = { overallCode: response.overall_code };
  out.statuses = response.statuses.map((status) => {
    const item: Json = { code: status.code };
    if (status.current_limit) item.currentLimit = { ...(status.current_limit.name ? { name: status.current_limit.name } : {}), requestsPerUnit: status.current_limit.requests_per_unit, unit: status.current_limit.unit };
    if (status.limit_remaining) item.limitRemaining = status.limit_remaining;
    if (status.duration_until_reset) item.durationUntilReset = `${status.duration_until_reset.seconds}s`;
    return item;
  });
  if (response.response_headers_to_add.length > 0) out.responseHeadersToAdd = response.response_headers_to_add;
  // bytes, as protojson writes them: base64
  if (response.raw_body !== undefined) out.rawBody = Buffer.from(response.raw_body).toString('base64');
  return out;
}
