// The allow and deny lists on the Envoy face (docs/decision-service.md#allow-and-deny-lists).
// Envoy sends descriptors, not a request, so the lists read these entries of
// them: `remote_address` (Envoy's remote_address action: the address its own
// trusted-hops rules resolved) against network entries, `tenant` against
// tenant entries, and any entry whose key is a header entry's name (a
// request_headers action with descriptor_key set to the header's name)
// against that header entry. The domain stands for the route, as it does for
// tenants' rules: global entries apply, a route-scoped one where a route of
// that id is the domain. A deny refuses the whole request before any
// descriptor is charged (OVER_LIMIT: Envoy has no 403 from a rate limit
// service; the body and a header name the code); an allow answers OK with no
// descriptor charged. Limit-scoped allows name a route's limit, which no
// descriptor is, and claim entries need a verified token: neither applies here.
import { type ParsedIp, parseIp } from '../core/ip-address.js';
import { isValidId } from '../core/ids.js';
import { countListed } from '../metrics/lists.js';
import type { ListChecker } from '../lists/list-set.js';
import type { ListAction } from '../lists/types.js';
import type { CheckedRequest } from './rls-request.js';
import type { Code, RlsStatus } from './rls-status.js';

export const REMOTE_ADDRESS_ENTRY = 'remote_address';
const TENANT_ENTRY = 'tenant';

/** What the lists read of one request, worked out once per distinct request (kept with its plan). */
export interface ListSubject {
  readonly domain: string;
  readonly tenant: string | undefined;
  readonly address: ParsedIp | undefined;
  /** Each entry's key (lower-cased) to its value: the first of the request's descriptors that has it. */
  readonly headers: Readonly<Record<string, string>>;
  readonly descriptors: number;
}

export function listSubjectOf(request: CheckedRequest): ListSubject {
  const headers: Record<string, string> = Object.create(null);
  let tenant: string | undefined;
  let address: ParsedIp | undefined;
  for (const descriptor of request.descriptors) {
    for (const { key, value } of descriptor.entries) {
      if (value === '') continue;
      if (key === TENANT_ENTRY && tenant === undefined && isValidId(value)) tenant = value;
      if (key === REMOTE_ADDRESS_ENTRY && address === undefined) address = parseIp(value);
      const name = key.toLowerCase();
      if (!(name in headers)) headers[name] = value;
    }
  }
  return { domain: request.domain, tenant, address, headers, descriptors: request.descriptors.length };
}

/** allow or deny when an entry decides the request (counted in sluice_list_decisions_total), else undefined. */
export function listActionOf(lists: ListChecker, subject: ListSubject, now: number): ListAction | undefined {
  const verdict = lists.check({ route: subject.domain, tenant: subject.tenant, headers: subject.headers, now, ip: () => subject.address });
  if (verdict.action !== undefined) countListed(verdict.action === 'deny' ? 'denied' : 'allowlisted');
  return verdict.action;
}

/** The body a denied client gets from Envoy (raw_body), as the gateway's 403 words it: the code, never the entry. */
export const DENIED_BODY = '{"error":"denied"}';
export const DENIED_HEADER = { key: 'x-sluice-denied', value: 'denied' } as const;

/** What rls.ts answers (its RlsResponse) for a listed request. */
export interface ListedResponse {
  overall_code: Code;
  statuses: RlsStatus[];
  response_headers_to_add: { key: string; value: string }[];
  raw_body?: string;
}

const OVER: RlsStatus = Object.freeze({ code: 'OVER_LIMIT', limit_remaining: 0 });
const OK: RlsStatus = Object.freeze({ code: 'OK' });

/** The answer to a listed request: denied, every descriptor over (shadow mode: reported, answered OK); allowed, every descriptor OK and none charged. */
export function listedResponse(action: ListAction, subject: ListSubject, shadowMode: boolean): ListedResponse {
  if (action === 'allow') return { overall_code: 'OK', statuses: new Array(subject.descriptors).fill(OK), response_headers_to_add: [] };
  const statuses = new Array(subject.descriptors).fill(OVER);
  if (shadowMode) return { overall_code: 'OK', statuses, response_headers_to_add: [] };
  return { overall_code: 'OVER_LIMIT', statuses, response_headers_to_add: [{ ...DENIED_HEADER }], raw_body: DENIED_BODY };
}
