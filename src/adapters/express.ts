// Sluice as connect/Express middleware: decides, sets the X-RateLimit-*
// headers, answers 429 (with Retry-After) when refused, 503 when the store is
// down and the rule says closed, else calls next().
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AdapterOptions, createRequestLimiter, hold } from './limit.js';

export type { AdapterLimit, AdapterListEntry, ClientIpOption, KeyOf, LimitTarget } from './limit.js';
export type SluiceExpressOptions<Request extends IncomingMessage = IncomingMessage> = AdapterOptions<Request>;

type Next = (error?: unknown) => void;

export function sluiceExpress<Request extends IncomingMessage = IncomingMessage>(options: SluiceExpressOptions<Request>) {
  const limit = createRequestLimiter(options);
  return (req: Request, res: ServerResponse, next: Next): void => {
    limit(req, req)
      .then(async (outcome) => {
        if (outcome.kind === 'skip') return next();
        if (outcome.kind === 'answered') {
          res.writeHead(outcome.status, { 'Content-Type': 'application/json' });
          res.end(outcome.body);
          return;
        }
        for (let i = 0; i < outcome.headers.length; i += 2) res.setHeader(outcome.headers[i]!, outcome.headers[i + 1]!);
        if (outcome.kind === 'refused') {
          if (!res.hasHeader('content-type')) res.setHeader('Content-Type', 'application/json');
          res.statusCode = outcome.status;
          res.end(outcome.body);
          return;
        }
        // Once the response has gone (or the client left): the reservations of limits that settle.
        if (outcome.settle) res.once('close', () => void outcome.settle!(res.statusCode));
        if (outcome.delayMs > 0) await hold(outcome.delayMs);
        next();
      })
      .catch((error: unknown) => next(error));
  };
}

export default sluiceExpress;
