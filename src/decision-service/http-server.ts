// The decision service's HTTP listener: POST /json (a RateLimitRequest as JSON,
// as the reference serves it), /decide (forward-auth, any method: proxies send
// GET or the original one; not served without routes), POST /usage (what an
// admitted request used, `{"units": N}`, charged without refusing) and GET /healthcheck
// (`OK` as the reference writes it; 503 while draining).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { ListenAddress } from '../config/types.js';
import { sendError } from '../http/errors.js';
import { MAX_COUNT } from '../policies/rule.js';
import { usageReports } from '../metrics/usage.js';
import type { ForwardAuth } from './forward-auth.js';
import { requestFromJson, responseToJson } from './json-mapping.js';
import type { Deciders } from './deciders.js';
import { RlsBadRequest } from './rls-request.js';
import type { Tracing } from '../tracing/types.js';

/** Largest /json body read: a request of many descriptors still fits. */
const MAX_JSON_BYTES = 1_048_576;
/** Largest /usage body read: `{"units": N}` is a few bytes. */
const MAX_USAGE_BYTES = 4096;

export class DecisionHttpServer {
  readonly server: Server;
  draining = false;
  /** A span per /decide and /json request, its parent from the request's traceparent; undefined: tracing off. */
  tracing: Tracing | undefined;

  /** `deciders` are read per request, so a reload swaps them under a running listener. */
  constructor(
    private readonly deciders: Deciders,
    private readonly log: Logger,
  ) {
    this.server = createServer((req, res) => (this.tracing ? this.traced(req, res, this.tracing) : this.route(req, res)));
  }

  listen({ host, port }: ListenAddress): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  close(): Promise<void> {
    this.draining = true;
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private traced(req: IncomingMessage, res: ServerResponse, tracing: Tracing): void {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path !== '/decide' && path !== '/json') {
      this.route(req, res);
      return;
    }
    const method = req.method ?? 'GET';
    const call = tracing.call(`${method} ${path}`, req.headers, { 'http.request.method': method, 'url.path': path, 'http.route': path });
    res.once('close', () => call.end({ httpStatus: res.statusCode }));
    call.run(() => this.route(req, res));
  }

  private route(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    try {
      const forwardAuth = this.deciders.forwardAuth;
      if (path === '/decide' && forwardAuth) forwardAuth.handle(req, res);
      else if (path === '/usage' && req.method === 'POST' && forwardAuth) this.usage(req, res, forwardAuth);
      else if (path === '/json' && req.method === 'POST') this.json(req, res);
      else if (path === '/healthcheck') res.writeHead(this.draining ? 503 : 200, { 'content-type': 'text/plain' }).end(this.draining ? 'draining\n' : 'OK');
      else sendError(res, 'no_route');
    } catch (error) {
      this.log.error({ err: error }, 'unexpected error in the decision service');
      sendError(res, 'internal_error');
    }
  }

  private json(req: IncomingMessage, res: ServerResponse): void {
    readBody(req, res, MAX_JSON_BYTES, (text) => this.decideJson(text, res));
  }

  /** POST /usage: `{"units": N}` for the request the proxy's headers name, as /decide reads them. */
  private usage(req: IncomingMessage, res: ServerResponse, forwardAuth: ForwardAuth): void {
    readBody(req, res, MAX_USAGE_BYTES, (text) => {
      const units = unitsOf(text);
      if (units instanceof RlsBadRequest) {
        usageReports.inc({ face: 'forward_auth', result: 'bad_request' });
        badRequest(res, units);
      } else forwardAuth.report(req, res, units);
    });
  }

  private decideJson(text: string, res: ServerResponse): void {
    let request: ReturnType<typeof requestFromJson>;
    try {
      request = requestFromJson(JSON.parse(text));
    } catch (error) {
      badRequest(res, error instanceof RlsBadRequest ? error : new RlsBadRequest('body', 'must be JSON'));
      return;
    }
    this.deciders.decider.shouldRateLimit(request).then(
      (response) => {
        const body = JSON.stringify(responseToJson(response));
        res.writeHead(response.overall_code === 'OVER_LIMIT' ? 429 : 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      },
      (error: unknown) => {
        if (error instanceof RlsBadRequest) {
          badRequest(res, error);
          return;
        }
        this.log.error({ err: error }, 'unexpected error in /json');
        sendError(res, 'internal_error');
      },
    );
  }
}

/** Reads a body of at most `max` bytes, then `then`; a larger one is a 413 and the connection closes. */
function readBody(req: IncomingMessage, res: ServerResponse, max: number, then: (text: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > max) {
      if (!res.headersSent) sendError(res, 'body_too_large', undefined, true);
    } else chunks.push(chunk);
  });
  req.on('end', () => {
    if (size <= max) then(Buffer.concat(chunks).toString('utf8'));
  });
}

/** The units of a /usage body, or what is wrong with it. */
function unitsOf(text: string): number | RlsBadRequest {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return new RlsBadRequest('body', 'must be JSON: {"units": N}');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return new RlsBadRequest('body', 'must be a JSON object: {"units": N}');
  const units = (body as { units?: unknown }).units;
  if (typeof units !== 'number' || !Number.isSafeInteger(units) || units < 0 || units > MAX_COUNT) return new RlsBadRequest('units', `must be an integer from 0 to ${MAX_COUNT}`);
  return units;
}

function badRequest(res: ServerResponse, error: RlsBadRequest): void {
  const body = JSON.stringify({ error: 'bad_request', field: error.field, message: error.message });
  res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}
