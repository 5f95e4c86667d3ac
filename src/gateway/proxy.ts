// Forwarding to upstreams: one keep-alive undici Pool per origin, bodies
// streamed both ways, hop-by-hop headers stripped, the upstream request
// cancelled when the client goes away, and failures mapped to 502/504/413/408.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Readable, Transform } from 'node:stream';
import { Pool } from 'undici';
import { BodyTooLargeError } from './body-limit.js';
import { type GatewayErrorName, sendError } from '../http/errors.js';
import type { HealthCheckConfig } from '../config/types.js';
import type { Balancer, Instance } from './balancer.js';
import { HealthCheck } from './health-check.js';
import { ResponseRelay } from './response-relay.js';
import { clientLeft } from './client-left.js';
import type { RequestContext, UpstreamPlan } from './upstream-plan.js';
import { upstreamRequests } from '../metrics/upstreams.js';
import { BodyGuard, BodyIdleError, type BodyLimits, type ReadBody, readBody } from './request-body.js';
import type { ResponseTap } from '../usage/usage-reader.js';

export interface ForwardTarget {
  /** The route's upstream instances. */
  balancer: Balancer;
  /** Its path rewrite and header edits. */
  plan: UpstreamPlan;
  timeoutMs: number;
  /** Statuses after which an idempotent request goes once to another instance. */
  retryOn: ReadonlySet<number>;
}

export type ForwardOutcome = 'ok' | 'aborted' | GatewayErrorName;

/** The request's tenant and route, and (tracing on) what puts the upstream span's traceparent in the forwarded headers. */
export interface ForwardContext extends RequestContext {
  propagate?: ((headers: string[]) => void) | undefined;
  /** The body already read (for the limits): sent as it is. */
  body?: ReadBody | undefined;
  /** Shown the relayed answer's head and each chunk as it passes (usage/usage-reader.ts); it never holds them. */
  tap?: ResponseTap | undefined;
}

/**
 * Why the upstream request stops early: the client left, or the upstream's
 * headers did not come in time. It cuts the attempt under way (a plain object:
 * an AbortController is an EventTarget, too heavy to make for every request
 * that almost never aborts).
 */
class ClientGone {
  aborted = false;
  timedOut = false;
  private current: ResponseRelay | undefined;
  /** The attempt a cut now stops. */
  watch(relay: ResponseRelay): void {
    this.current = relay;
    if (this.aborted) relay.cut(new Error('the client went away')); // it left while the body was read
  }
  abort(): void {
    if (this.aborted || this.timedOut) return;
    this.aborted = true;
    this.current?.cut(new Error('the client went away'));
  }
  /** The route's timeout passed before the upstream's headers came. */
  timeout(): void {
    if (this.aborted || this.timedOut) return;
    this.timedOut = true;
    this.current?.cut(new Error('the upstream did not answer in time'));
  }
}

export class Upstreams {
  private readonly pools = new Map<string, Pool>();
  private checks: HealthCheck[] = [];

  /** The routes' active health checks now (a reload replaces them whole). */
  checkHealth(balancers: Iterable<{ balancer: Balancer; health: HealthCheckConfig | undefined }>): void {
    for (const check of this.checks) check.stop();
    this.checks = [];
    for (const { balancer, health } of balancers) if (health && balancer.size > 1) this.checks.push(new HealthCheck(balancer, health));
  }

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

  /** Upstream requests running or queued across every pool: 0 when every connection is idle again. */
  inFlight(): number {
    let count = 0;
    for (const pool of this.pools.values()) count += pool.stats.running + pool.stats.queued;
    return count;
  }

  /** Waits for in-flight upstream requests, then closes every pool. */
  async close(): Promise<void> {
    this.checkHealth([]);
    await Promise.allSettled([...this.pools.values()].map((pool) => pool.close()));
  }

  destroy(): Promise<unknown> {
    return Promise.allSettled([...this.pools.values()].map((pool) => pool.destroy()));
  }
}

/** Where a request goes and what the gateway adds: the rate-limit headers, the body's bounds. */
export interface Forwarding {
  readonly target: ForwardTarget;
  readonly extraHeaders: string[];
  readonly bodyLimits: BodyLimits;
}

/**
 * Sends `req` upstream and streams the answer into `res`, adding `extraHeaders`
 * (the rate-limit headers). A small body is read first (see request-body.ts).
 * Never rejects: the outcome says what happened.
 */
export async function forward(req: IncomingMessage, res: ServerResponse, { target, extraHeaders, bodyLimits: limits }: Forwarding, context: ForwardContext): Promise<ForwardOutcome> {
  const gone = new ClientGone();
  const onClose = () => {
    if (!res.writableFinished) gone.abort();
  };
  res.once('close', onClose);
  try {
    // A client gone before this point (a stream reset while its limit was decided) already had its 'close': never take a connection for it.
    if (clientLeft(res)) return fail(res, 'aborted', extraHeaders);
    const path = target.plan.path(req.url ?? '/'); // undefined: the route's rewrite would leave its target
    if (path === undefined) return fail(res, 'invalid_path', extraHeaders);
    const read = context.body ?? (await readBody(req, limits));
    if (read.kind === 'failed') return fail(res, read.reason, extraHeaders);
    if (clientLeft(res)) return fail(res, 'aborted', extraHeaders);
    const body = requestBody(req, read, limits);
    const headers = target.plan.requestHeaders(req, context);
    context.propagate?.(headers);
    const call: UpstreamCall = { req, res, target, extraHeaders, gone, body, path, headers, route: context.route, tap: context.tap };
    return await dispatchWithRetry(call);
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

/** Methods a retry cannot turn into a second effect (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);
/** Failures where the request never left: it can go to another instance whatever its method. */
const NOT_SENT = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/**
 * Methods that, without a body, may go to another instance after the connection
 * broke before any response byte (a killed instance, a keep-alive socket its peer
 * closed): the upstream may have seen the request, so only a read is sent again,
 * as Envoy's `retry_on: reset` and nginx's `proxy_next_upstream error` do.
 */
const SAFE_TO_RESEND = new Set(['GET', 'HEAD', 'OPTIONS']);
/** The connection broke (reset, closed by the peer) rather than timed out or refused. */
const BROKEN = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

interface UpstreamCall {
  req: IncomingMessage;
  res: ServerResponse;
  target: ForwardTarget;
  extraHeaders: string[];
  gone: ClientGone;
  body: Buffer | Readable | null;
  path: string;
  headers: string[];
  route: string;
  tap: ResponseTap | undefined;
}

/** What one attempt on one instance gave: an outcome, or a reason to try another instance. */
type Attempt = { outcome: ForwardOutcome } | { retry: 'not_sent' | 'status'; error?: unknown };

/**
 * One instance, and at most one other: a connection that could not be made is
 * retried on another instance, so is a GET/HEAD/OPTIONS without a body whose
 * connection broke before any response byte, and so is an idempotent request
 * answered with one of the route's retryOn statuses. A streamed body cannot be sent twice.
 */
async function dispatchWithRetry(call: UpstreamCall): Promise<ForwardOutcome> {
  const { balancer } = call.target;
  const canRetry = balancer.size > 1 && !(call.body instanceof Transform);
  const first = balancer.pick();
  const tried = await attempt(call, first, canRetry);
  if ('outcome' in tried) return tried.outcome;
  first.metrics.retried.inc();
  const second = await attempt(call, balancer.pick(first), false);
  if ('outcome' in second) return second.outcome;
  return fail(call.res, classify(second.error, call.gone), call.extraHeaders); // unreachable: a last attempt always has an outcome
}

function attempt(call: UpstreamCall, instance: Instance, canRetry: boolean): Promise<Attempt> {
  const { req, res, target, gone, body } = call;
  const retryStatus = canRetry && IDEMPOTENT.has(req.method ?? 'GET') ? target.retryOn : undefined;
  const timer = headersTimer(call);
  const started = performance.now();
  let answered = false;
  return new Promise<Attempt>((resolve) => {
    const onHead = (statusCode: number, rawHeaders: readonly (Buffer | string)[]) => {
      timer.answered();
      answered = true;
      instance.metrics.latency.observe((performance.now() - started) / 1000);
      if (retryStatus?.has(statusCode)) return 'discard';
      const out = target.plan.responseHeaders(rawHeaders);
      for (let i = 0; i < call.extraHeaders.length; i++) out.push(call.extraHeaders[i]!);
      res.writeHead(statusCode, out);
      call.tap?.head(statusCode, rawHeaders);
      return 'relay';
    };
    const relay = new ResponseRelay(res, onHead, (error, discarded) => {
      timer.answered();
      if (error !== undefined) return resolve(failedAttempt(call, instance, canRetry, error, answered));
      target.balancer.succeeded(instance);
      if (discarded) return resolve({ retry: 'status' });
      instance.metrics.ok.inc();
      resolve({ outcome: 'ok' });
    }, call.tap);
    gone.watch(relay);
    instance.pool.dispatch({ path: call.path, method: req.method as 'GET', headers: call.headers, body, headersTimeout: target.timeoutMs, bodyTimeout: target.timeoutMs }, relay);
  });
}

/**
 * undici's own timers are coarse (a 300 ms timeout fired after ~1 s): the wait
 * for headers is timed here, from the moment the whole body is on its way.
 */
function headersTimer({ body, gone, target }: UpstreamCall): { answered(): void } {
  let timer: NodeJS.Timeout | undefined;
  let answered = false;
  const start = () => {
    if (!answered) timer = setTimeout(() => gone.timeout(), target.timeoutMs);
  };
  if (body instanceof Transform) body.once('end', start);
  else start();
  return {
    answered() {
      answered = true;
      clearTimeout(timer);
    },
  };
}

function failedAttempt(call: UpstreamCall, instance: Instance, canRetry: boolean, error: unknown, answered: boolean): Attempt {
  const outcome = classify(error, call.gone);
  const code = (error as { code?: string } | null)?.code ?? '';
  const notSent = NOT_SENT.has(code);
  const brokenBeforeAnswer = !answered && BROKEN.has(code) && !call.gone.timedOut;
  if (notSent || brokenBeforeAnswer || outcome === 'upstream_timeout') call.target.balancer.failed(instance);
  const resend = brokenBeforeAnswer && call.body === null && SAFE_TO_RESEND.has(call.req.method ?? 'GET');
  if ((notSent || resend) && canRetry && !call.gone.aborted) return { retry: 'not_sent', error };
  if (outcome !== 'aborted') {
    upstreamRequests.labels(call.route, instance.url, outcome).inc();
    instance.metrics.tally.requests++;
    instance.metrics.tally.errors++;
  }
  return { outcome: fail(call.res, outcome, call.extraHeaders) };
}

function fail(res: ServerResponse, outcome: Exclude<ForwardOutcome, 'ok'>, extraHeaders: string[]): ForwardOutcome {
  if (outcome === 'aborted') res.destroy();
  else sendError(res, outcome, extraHeaders, outcome === 'body_too_large' || outcome === 'bad_request' || outcome === 'request_timeout' || outcome === 'invalid_path');
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
