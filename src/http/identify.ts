// Step 3 of the request path, shared by the gateway and the forward-auth
// endpoint: the API key's tenant (with the key's own plan, when it has one:
// docs/plans.md), none on an anonymous route; on a route with `auth: jwt`, the
// verified token's identity (its tenant, plan and claims), with the API key's
// tenant when the token names none (no tenantClaim). Rule resolution uses the
// identity's plan when that plan exists.
//
// listVerdict, below: the allow and deny lists asked about one request, as the gateway and the
// decision service's forward-auth both ask: the route, the identity found
// (tenant, verified claims), the headers, and the client address the
// trusted-proxy rules resolve, worked out only when a network entry exists.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { AuthFailure } from '../auth/failures.js';
import type { JwtVerifier } from '../auth/jwt-verifier.js';
import type { RouteConfig } from '../config/types.js';
import type { ListChecker } from '../lists/list-set.js';
import type { ListVerdict } from '../lists/types.js';
import type { ClientIpResolver } from '../request-limits/client-ip.js';
import type { RequestIdentity } from '../request-limits/types.js';
import type { KeyOwner, TenantResolver } from '../rules/types.js';
import { countHeader } from './routes.js';

export type { RequestIdentity } from '../request-limits/types.js';

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
): RequestIdentity | { problem: KeyProblem } {
  if (route?.anonymous) return { tenant: undefined };
  const apiKey = headers[keyHeader];
  if (Array.isArray(apiKey) || (typeof apiKey === 'string' && apiKey.includes(','))) return { problem: 'duplicate_api_key' };
  if (typeof apiKey !== 'string' || apiKey === '') return { problem: 'missing_api_key' };
  if (rawHeaders !== undefined && countHeader(rawHeaders, keyHeader) > 1) return { problem: 'duplicate_api_key' };
  const identity: KeyOwner | undefined = tenants.identityFor ? tenants.identityFor(apiKey) : optionalTenant(tenants.tenantFor(apiKey));
  return identity === undefined ? { problem: 'unknown_api_key' } : identity;
}

export interface TokenRequest {
  readonly route: RouteConfig;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders?: readonly string[] | undefined;
  readonly keyHeader: string;
  readonly tenants: TenantResolver;
}

/**
 * A route with `auth: jwt`: the token verified (a failure is `{ refused }`:
 * the caller answers 401 or 503), its tenantClaim's tenant, or else the API
 * key's as on any route; its planClaim's plan; its claims for the limits.
 */
export async function identityOfToken(verifier: JwtVerifier, request: TokenRequest): Promise<RequestIdentity | { problem: KeyProblem } | { refused: AuthFailure }> {
  const found = await verifier.identify(request.headers, request.rawHeaders);
  if (typeof found === 'string') return { refused: found };
  if (verifier.config.tenantClaim !== undefined) return found;
  const byKey = tenantOfRequest(request.route, request.headers, request.keyHeader, request.tenants, request.rawHeaders);
  // The token's plan claim names the plan over the key's own.
  return 'problem' in byKey ? byKey : { ...found, tenant: byKey.tenant, plan: found.plan ?? byKey.plan };
}

const optionalTenant = (tenant: string | undefined): KeyOwner | undefined => (tenant === undefined ? undefined : { tenant });

export function listVerdict(lists: ListChecker, clientIp: ClientIpResolver, req: IncomingMessage, route: string, identity: RequestIdentity): ListVerdict {
  return lists.check({
    route,
    tenant: identity.tenant,
    headers: req.headers,
    claims: identity.claims,
    now: Date.now(),
    ip: () => clientIp.clientIp(req.socket.remoteAddress, req.headers),
  });
}
