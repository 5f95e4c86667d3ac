// Step 3 of the request path, shared by the gateway and the forward-auth
// endpoint: the API key's tenant, none on an anonymous route.
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteConfig } from '../config/types.js';
import type { TenantResolver } from '../rules/types.js';

export type KeyProblem = 'missing_api_key' | 'unknown_api_key';

/** The tenant (undefined on an anonymous route), or why the request has none: a missing key is a 401 even before a 404. */
export function tenantOfRequest(route: RouteConfig | undefined, headers: IncomingHttpHeaders, keyHeader: string, tenants: TenantResolver): { tenant: string | undefined } | { problem: KeyProblem } {
  if (route?.anonymous) return { tenant: undefined };
  const apiKey = headers[keyHeader];
  if (typeof apiKey !== 'string' || apiKey === '') return { problem: 'missing_api_key' };
  const tenant = tenants.tenantFor(apiKey);
  return tenant === undefined ? { problem: 'unknown_api_key' } : { tenant };
}
