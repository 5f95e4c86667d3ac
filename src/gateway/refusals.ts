// The gateway's answers to a request it will not forward: refused by a rate
// limit (429), or whose limits cannot be formed (400, 503, or a connection
// already gone). Never forwarded unlimited.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { LimitProblem } from '../request-limits/request-limits.js';
import { abandonBody, gatewayStatus, sendError } from '../http/errors.js';
import type { LimitView, Rejection } from '../http/headers.js';

interface Context {
  tenant: string | undefined;
  route: string;
}

/** The 429 of a rate limit: its rejection's headers and body; a body still on its way is not waited for. */
export function refuseRated(req: IncomingMessage, res: ServerResponse, { headers, body }: Rejection, log: Logger, refused: Context & LimitView): void {
  if (!req.complete) abandonBody(res);
  headers.push('Content-Length', String(Buffer.byteLength(body)));
  res.writeHead(gatewayStatus('rate_limited'), headers);
  res.end(body);
  // The limit's id, never the bucket: that may hold a client's address.
  log.debug({ tenant: refused.tenant, route: refused.route, limit: refused.limitId, rule: refused.from, retryAfterMs: refused.decision.retryAfterMs, ...(refused.decision.blockedUntilMs === undefined ? {} : { blockedUntilMs: refused.decision.blockedUntilMs }) }, refused.decision.blockedUntilMs === undefined ? 'rate limited' : 'blocked by a penalty box');
}

/** A request whose limits cannot be formed: answered, never forwarded unlimited. */
export function answerUnlimitable(res: ServerResponse, problem: LimitProblem, log: Logger, { tenant, route }: Context): void {
  if (problem === 'no_client_address') {
    res.destroy(); // the connection is already gone
    return;
  }
  if (problem === 'cost_exceeds_capacity') log.warn({ tenant, route }, "the route's cost exceeds the capacity of the tenant's rule: no request can pass");
  sendError(res, problem);
}
