// The decision service's HTTP listener: POST /json (a RateLimitRequest as JSON,
// as the reference serves it), /decide (forward-auth, any method: proxies send
// GET or the original one; not served without routes) and GET /healthcheck
// (`OK` as the reference writes it; 503 while draining).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { ListenAddress } from '../config/types.js';
import { sendError } from '../gateway/errors.js';
import { requestFromJson, responseToJson } from './json-mapping.js';
import type { DecisionFaces } from './faces.js';
import { RlsBadRequest } from './rls-request.js';
import type { Tracing } from '../tracing/types.js';

/** Largest /json body read: a request of many descriptors still fits. */
const MAX_JSON_BYTES = 1_048_576;

export class DecisionHttpServer {
  readonly server: Server;
  draining = false;
  /** A span per /decide and /json request, its parent from the request's traceparent; undefined: tracing off. */
  tracing: Tracing | undefined;

  /** `faces` are read per request, so a reload swaps them under a running listener. */
  constructor(
    private readonly faces: DecisionFaces,
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
      const forwardAuth = this.faces.forwardAuth;
      if (path === '/decide' && forwardAuth) forwardAuth.handle(req, res);
      else if (path === '/json' && req.method === 'POST') this.json(req, res);
      else if (path === '/healthcheck') res.writeHead(this.draining ? 503 : 200, { 'content-type': 'text/plain' }).end(this.draining ? 'draining\n' : 'OK');
      else sendError(res, 'no_route');
    } catch (error) {
      this.log.error({ err: error }, 'unexpected error in the decision service');
      sendError(res, 'internal_error');
    }
  }

  private json(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_JSON_BYTES) sendError(res, 'body_too_large', undefined, true);
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (size <= MAX_JSON_BYTES) this.decideJson(Buffer.concat(chunks).toString('utf8'), res);
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
    this.faces.decider.shouldRateLimit(request).then(
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

function badRequest(res: ServerResponse, error: RlsBadRequest): void {
  const body = JSON.stringify({ error: 'bad_request', field: error.field, message: error.message });
  res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}
