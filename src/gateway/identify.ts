// Step 3 of the request path, shared by the gateway and the forward-auth
// endpoint: the API key's tenant (with the key's own plan, when it has one:
// docs/plans.md), none on an anonymous route. `plan` is the identity's plan
// (a JWT's plan claim sets it too); rule resolution uses it when it exists.
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteConfig } from '../config/types.js';
import type { RequestIdentity, TenantResolver } from '../rules/types.js';
import { countHeader } from './request-screen.js';

export type KeyProblem = 'missing_api_key' | 'unknown_api_key' | 'duplicate_api_key';

/**
 * The tenant (undefined on an anonymous route), or why the request has none: a
 * missing key is a 401 even before a 404. A key sent twice (two headers, which
 * node joins with `, `, or one holding a list) is refused: read as one unknown
 * key it would be a fresh anonymous tenant under `unknownKeys: default-rule`,
 * while the upstream, reading the first value, served the real tenant.
 * `rawHeaders` (when given) also catches a repeated header node keeps only the
 * first of (Authorization).
 */
export function tenantOfRequest(
  route: RouteConfig | undefined,
  headers: IncomingHttpHeaders,
  keyHeader: string,
  tenants: TenantResolver,
  rawHeaders?: readonly string[],
): { tenant: string | undefined; plan?: string } | { problem: KeyProblem } {
  if (route?.anonymous) return { tenant: undefined };
  const apiKey = headers[keyHeader];
  if (Array.isArray(apiKey) || (typeof apiKey === 'string' && apiKey.includes(','))) return { problem: 'duplicate_api_key' };
  if (typeof apiKey !== 'string' || apiKey === '') return { problem: 'missing_api_key' };
  if (rawHeaders !== undefined && countHeader(rawHeaders, keyHeader) > 1) return { problem: 'duplicate_api_key' };
  const identity: RequestIdentity | undefined = tenants.identityFor ? tenants.identityFor(apiKey) : optionalTenant(tenants.tenantFor(apiKey));
  return identity === undefined ? { problem: 'unknown_api_key' } : identity;
}

const optionalTenant = (tenant: string | undefined): RequestIdentity | undefined => (tenant === undefined ? undefined : { tenant });
