// The allow and deny lists asked about one request, as the gateway and the
// decision service's forward-auth both ask: the route, the identity found
// (tenant, verified claims), the headers, and the client address the
// trusted-proxy rules resolve, worked out only when a network entry exists.
import type { IncomingMessage } from 'node:http';
import type { ClientIpResolver } from '../request-limits/client-ip.js';
import type { ListChecker } from '../lists/list-set.js';
import type { ListVerdict } from '../lists/types.js';
import type { RequestIdentity } from './identify.js';

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
