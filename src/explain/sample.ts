// The sample request `sluice explain` is asked about, and how it is read from
// the admin API's query (GET /explain) or the CLI's options: every field
// checked, a bad one named (400 / exit 2), so a typo is never explained as a
// request the gateway would see.
import { isIP } from 'node:net';
import { SluiceError } from '../core/errors.js';

export interface SampleRequest {
  /** As sent: the gateway refuses a method that is not upper-case (explain says so). */
  readonly method: string;
  /** The request target: path and optional query, as a client sends it. */
  readonly path: string;
  /** The Host header; absent: none (a route with a host then never matches). */
  readonly host?: string | undefined;
  /** `[name, value]` pairs in the order sent; names of any case. */
  readonly headers: readonly (readonly [string, string])[];
  /** The socket's peer address (X-Forwarded-For is read only when it is a trusted proxy); absent: none. */
  readonly ip?: string | undefined;
}

/** What the fields are called on the wire: the query parameters and the CLI's options. */
export interface SampleFields {
  method?: string | undefined;
  path?: string | undefined;
  host?: string | undefined;
  /** Each `Name: value`. */
  header?: readonly string[] | undefined;
  ip?: string | undefined;
}

export const SAMPLE_FIELDS = ['method', 'path', 'host', 'header', 'ip'] as const;

/** An RFC 9110 field name (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The sample, or a SluiceError (400) naming the bad field. */
export function parseSample(fields: SampleFields): SampleRequest {
  const method = (fields.method ?? 'GET').trim();
  if (!/^[A-Za-z_-]+$/.test(method)) throw bad('method', 'must be an HTTP method such as GET or POST');
  const path = fields.path;
  if (path === undefined || path === '') throw bad('path', 'is required: the request target, e.g. /orders/42');
  if (!path.startsWith('/')) throw bad('path', 'must start with /');
  const headers = (fields.header ?? []).map((line, i) => headerOf(line, i));
  if (fields.host !== undefined && fields.host.trim() === '') throw bad('host', 'must not be empty');
  if (fields.ip !== undefined && isIP(fields.ip.trim()) === 0) throw bad('ip', 'must be an IPv4 or IPv6 address (the connecting peer)');
  return { method, path, host: fields.host?.trim(), headers, ip: fields.ip?.trim() };
}

function headerOf(line: string, index: number): [string, string] {
  const colon = line.indexOf(':');
  const name = colon === -1 ? '' : line.slice(0, colon).trim();
  if (!HEADER_NAME.test(name)) throw bad(`header[${index}]`, "must be 'Name: value' with a valid header name");
  return [name, line.slice(colon + 1).trim()];
}

/** The admin API's query: the sample's fields, any other parameter refused (a typo would be silently ignored). */
export function sampleFromQuery(query: URLSearchParams): SampleRequest {
  for (const name of new Set(query.keys())) {
    if (!(SAMPLE_FIELDS as readonly string[]).includes(name)) throw bad(name, `is not a parameter of /explain; use ${SAMPLE_FIELDS.join(', ')}`);
    if (name !== 'header' && query.getAll(name).length > 1) throw bad(name, 'is given more than once');
  }
  return parseSample({
    method: query.get('method') ?? undefined,
    path: query.get('path') ?? undefined,
    host: query.get('host') ?? undefined,
    header: query.getAll('header'),
    ip: query.get('ip') ?? undefined,
  });
}

/** The sample as GET /explain's query (the CLI's --admin form sends it). */
export function sampleQuery(sample: SampleRequest): URLSearchParams {
  const query = new URLSearchParams({ method: sample.method, path: sample.path });
  if (sample.host !== undefined) query.set('host', sample.host);
  for (const [name, value] of sample.headers) query.append('header', `${name}: ${value}`);
  if (sample.ip !== undefined) query.set('ip', sample.ip);
  return query;
}

const bad = (field: string, message: string): SluiceError => new SluiceError('ERR_BAD_REQUEST', message, field);
