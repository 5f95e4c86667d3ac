// The route's `kind: concurrency` limits, before its rate limits: the request
// takes one lease per limit from the concurrency limiter, or is refused (429,
// or 503 when the store is down and the limit says closed) without touching
// any rate bucket. Admitted, its leases go back when its response closes:
// finished, aborted by the client, failed upstream, a tunnel closed, or cut by
// the drain. A rate limit that then refuses ends the response, which gives the
// leases back at once: a refused request holds nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { GATEWAY_ERRORS } from '../core/error-codes.js';
import type { ConcurrencyLimiter } from '../limiter/concurrency/concurrency-limiter.js';
import type { Admission, SlotLimitCall } from '../limiter/concurrency/types.js';
import type { LimitCounters } from '../metrics/limit-decisions.js';
import type { LimitProblem, LimitRequest, RouteLimits } from '../request-limits/request-limits.js';
import { abandonBody, gatewayStatus, sendError } from '../http/errors.js';
import { type HeaderOptions, headerInt, QUOTA_EXCEEDED_TYPE } from '../http/headers.js';

/** What a concurrency refusal tells the client to wait: a slot frees when a request ends, which nothing predicts. */
export const CONCURRENCY_RETRY_AFTER_S = 1;

export class ConcurrencyGate {
  private headerOptions!: HeaderOptions;
  private counters!: ReadonlyMap<string, LimitCounters>;

  constructor(
    private readonly limiter: ConcurrencyLimiter,
    private readonly log: Logger,
  ) {}

  /** A reloaded config's header options and counters. */
  configure(headerOptions: HeaderOptions, counters: ReadonlyMap<string, LimitCounters>): void {
    this.headerOptions = headerOptions;
    this.counters = counters;
  }

  /** Runs `next` once the request holds its leases (at once when the route has no concurrency limit); answers a refusal itself. */
  admit(limits: RouteLimits, { tenant, request }: { tenant: string | undefined; request: LimitRequest }, req: IncomingMessage, res: ServerResponse, next: () => void): LimitProblem | undefined {
    if (!limits.hasConcurrency) {
      next();
      return undefined;
    }
    const slots = limits.slots(tenant, request);
    if (typeof slots === 'string') return slots;
    // Listened to before asking: a client gone while the leases are taken gives them back as soon as they arrive.
    let closed = false;
    let admission: Admission | undefined;
    res.once('close', () => {
      closed = true;
      admission?.release();
    });
    this.limiter.acquire(slots).then(
      (granted) => {
        admission = granted;
        if (closed) granted.release();
        else if (granted.allowed) {
          for (const slot of slots) this.counters.get(slot.limitId)?.count('allowed');
          next();
        } else this.refuse(req, res, slots, granted, tenant);
      },
      (error: unknown) => {
        this.log.error({ err: error }, 'unexpected error in the limiter path');
        sendError(res, 'internal_error');
      },
    );
    return undefined;
  }

  /** Gives back every lease still held (the gateway's close, after its drain). */
  close(): Promise<void> {
    return this.limiter.close();
  }

  private refuse(req: IncomingMessage, res: ServerResponse, slots: readonly SlotLimitCall[], admission: Admission, tenant: string | undefined): void {
    const slot = slots[admission.refusedBy]!;
    this.counters.get(slot.limitId)?.count(admission.unavailable ? 'unavailable' : 'limited');
    if (admission.unavailable) {
      sendError(res, 'store_unavailable', ['Retry-After', String(CONCURRENCY_RETRY_AFTER_S)]);
      return;
    }
    const { headers, body } = concurrencyRejection(slot, this.headerOptions);
    if (!req.complete) abandonBody(res);
    headers.push('Content-Length', String(Buffer.byteLength(body)));
    res.writeHead(gatewayStatus('concurrency_limited'), headers);
    res.end(body);
    this.log.debug({ tenant, limit: slot.limitId }, 'concurrency limited');
  }
}

/** The 429 of a full concurrency limit: Retry-After, the X-RateLimit-* (and IETF) fields naming it, and a body naming it. */
export function concurrencyRejection(slot: SlotLimitCall, options: HeaderOptions): { headers: string[]; body: string } {
  const retry = String(CONCURRENCY_RETRY_AFTER_S);
  const headers = ['Retry-After', retry, 'X-RateLimit-Limit', String(headerInt(slot.max)), 'X-RateLimit-Remaining', '0', 'X-RateLimit-Reset', retry];
  // A concurrency quota has no window: the policy item carries q only (draft-11 makes w optional).
  if (options.ietf) headers.push('RateLimit-Policy', `"${slot.limitId}";q=${headerInt(slot.max)}`, 'RateLimit', `"${slot.limitId}";r=0;t=${retry}`);
  const retryAfterMs = CONCURRENCY_RETRY_AFTER_S * 1000;
  if (options.problemJson) {
    headers.push('Content-Type', 'application/problem+json');
    const detail = `At most ${slot.max} requests of limit ${slot.limitId} may be open at once; retry after ${retry} second.`;
    return { headers, body: JSON.stringify({ type: QUOTA_EXCEEDED_TYPE, title: 'Too Many Requests', status: GATEWAY_ERRORS.concurrency_limited.status, detail, limit: slot.limitId, retryAfterMs }) };
  }
  headers.push('Content-Type', 'application/json');
  return { headers, body: JSON.stringify({ error: 'concurrency_limited', limit: slot.limitId, retryAfterMs }) };
}
