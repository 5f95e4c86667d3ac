// Forwarding to upstreams: one keep-alive undici Pool per origin, bodies
// streamed both ways, hop-by-hop headers stripped, the upstream request
// cancelled when the client goes away, and failures mapped to 502/504/413/408.
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Readable, Transform } from 'node:stream';
import { Pool } from 'undici';
import { BodyTooLargeError } from './body-limit.js';
import { type GatewayErrorName, sendError } from './errors.js';
import { forwardedRequestHeaders, forwardedResponseHeaders } from './hop-by-hop.js';
import { BodyGuard, BodyIdleError, type BodyLimits, type ReadBody, readBody } from './request-body.js';

export interface ForwardTarget {
  pool: Pool;
  timeoutMs: number;
}

export type ForwardOutcome = 'ok' | 'aborted' | GatewayErrorName;

/**
 * The upstream request's abort signal. undici takes an EventEmitter as well as
 * an AbortSignal; an AbortController (an EventTarget) per request cost about
 * 3 % of the gateway's CPU in profiles.
 */
class ClientGone extends EventEmitter {
  aborted = false;
  timedOut = false;
  abort(): void {
    if (this.aborted || this.timedOut) return;
    this.aborted = true;
    this.emit('abort');
  }
  /** The route's timeout passed before the upstream's headers came. */
  timeout(): void {
    if (this.aborted || this.timedOut) return;
    this.timedOut = true;
    this.emit('abort');
  }
}

export class Upstreams {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly maxConnections = 512) {}

  /** The pool for an origin, created on first use. */
  pool(origin: string): Pool {
    let pool = this.pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, { connections: this.maxConnections, keepAliveTimeout: 4_000, connect: { timeout: 10_000 } });
      this.pools.set(origin, pool);
    }
    return pool;
  }

  /** Waits for in-flight upstream requests, then closes every pool. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.pools.values()].map((pool) => pool.close()));
  }

  destroy(): Promise<unknown> {
    return Promise.allSettled([...this.pools.values()].map((pool) => pool.destroy()));
  }
}

/**
 * Sends `req` upstream and streams the answer into `res`, adding `extraHeaders`
 * (the rate-limit headers). A small body is read first (see request-body.ts).
 * Never rejects: the outcome says what happened.
 */
export async function forward(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, extraHeaders: string[], limits: BodyLimits): Promise<ForwardOutcome> {
  const gone = new ClientGone();
  const onClose = () => {
    if (!res.writableFinished) gone.abort();
  };
  res.once('close', onClose);
  try {
    const read = await readBody(req, limits);
    if (read.kind === 'failed') return fail(res, read.reason, extraHeaders);
    return await dispatch(req, res, target, extraHeaders, gone, requestBody(req, read, limits));
  } finally {
    res.off('close', onClose);
  }
}

function requestBody(req: IncomingMessage, read: ReadBody, limits: BodyLimits): Buffer | Readable | null {
  if (read.kind === 'whole') return read.body;
  if (read.kind !== 'stream') return null;
  const guard = new BodyGuard(limits.maxBytes, limits.idleMs);
  req.once('error', (error) => guard.destroy(error));
  return req.pipe(guard);
}

function dispatch(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, extraHeaders: string[], gone: ClientGone, body: Buffer | Readable | null): Promise<ForwardOutcome> {
  // undici's own timers are coarse (a 300 ms timeout fired after ~1 s): time the wait for headers here,
  // from the moment the whole body is on its way.
  let timer: NodeJS.Timeout | undefined;
  let answered = false;
  const startTimer = () => {
    if (!answered) timer = setTimeout(() => gone.timeout(), target.timeoutMs);
  };
  if (body instanceof Transform) body.once('end', startTimer);
  else startTimer();
  return target.pool
    .stream(
      {
        path: req.url ?? '/',
        method: req.method as 'GET',
        headers: forwardedRequestHeaders(req),
        body,
        signal: gone,
        headersTimeout: target.timeoutMs,
        bodyTimeout: target.timeoutMs,
      },
      ({ statusCode, headers }) => {
        answered = true;
        clearTimeout(timer);
        const out = forwardedResponseHeaders(headers);
        for (let i = 0; i < extraHeaders.length; i++) out.push(extraHeaders[i]!);
        res.writeHead(statusCode, out);
        return res;
      },
    )
    .then(
      (): ForwardOutcome => 'ok',
      (error: unknown): ForwardOutcome => fail(res, classify(error, gone), extraHeaders),
    )
    .finally(() => clearTimeout(timer));
}

function fail(res: ServerResponse, outcome: Exclude<ForwardOutcome, 'ok'>, extraHeaders: string[]): ForwardOutcome {
  if (outcome === 'aborted') res.destroy();
  else sendError(res, outcome, extraHeaders, outcome === 'body_too_large' || outcome === 'bad_request' || outcome === 'request_timeout');
  return outcome;
}

function classify(error: unknown, gone: ClientGone): Exclude<ForwardOutcome, 'ok'> {
  if (gone.timedOut) return 'upstream_timeout';
  if (gone.aborted) return 'aborted';
  if (error instanceof BodyTooLargeError || error instanceof BodyIdleError) return error.code;
  const code = (error as { code?: string } | null)?.code;
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'upstream_timeout';
    case 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH':
      return 'bad_request';
    default:
      // Refused, reset, DNS, a socket closed early: the upstream could not answer.
      return 'upstream_unreachable';
  }
}
