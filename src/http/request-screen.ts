// What the gateway refuses before it routes a request, each with a 400 of its
// own: a Host that is no host name (it would reach X-Forwarded-Host raw and
// could dodge a host route), a path that cannot be normalized, and an upgrade
// that carries a body (the body would not follow the upgrade upstream, and an
// upstream that ignored the Upgrade would read it as the next request). An
// accepted request's url is rewritten to its normalized form, so the route is
// matched on, and the upstream sent, the same path.
import type { IncomingMessage } from 'node:http';
import { countHeader } from '../core/raw-headers.js';
import type { GatewayErrorName } from './errors.js';
import { normalizeTarget } from './request-path.js';

/** A host name (labels, an optional trailing dot), an IPv4 address or `[IPv6]`, with an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+\.?)(?::[0-9]{1,5})?$/;

/** Why the request is refused, or undefined (its url then normalized). */
export function screenRequest(req: IncomingMessage): GatewayErrorName | undefined {
  if (!validHost(req)) return 'invalid_host';
  if ((req as { upgrade?: boolean }).upgrade === true && hasBody(req)) return 'upgrade_with_body';
  const url = req.url ?? '/';
  const normal = normalizeTarget(url);
  if (normal === undefined) return 'invalid_path';
  if (normal !== url) req.url = normal;
  return undefined;
}

function validHost(req: IncomingMessage): boolean {
  const { host } = req.headers;
  const authority = req.headers[':authority'];
  if (host !== undefined && (!HOST.test(host) || countHeader(req.rawHeaders, 'host') > 1)) return false;
  return authority === undefined || (typeof authority === 'string' && HOST.test(authority));
}

export { countHeader };

/** Whether the request says a body follows. */
const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && Number(req.headers['content-length']) !== 0);
