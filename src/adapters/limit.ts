// What the in-process adapters share: which buckets a request counts in
// (targets.ts), one engine decision for all of them (decideAll: every limit
// admits or none is charged), and the same headers, 429 and 503 as the gateway.
import type { IncomingMessage } from 'node:http';
import { GATEWAY_ERRORS, gatewayErrorBody } from '../core/error-codes.js';
import { limitViews, pushLimitsHeaders, rejectionOf, retryAfterSeconds } from '../http/headers.js';
import { type AdapterOptions, type CheckedOptions, checkOptions } from './options.js';
import { settlementOf } from './settle.js';
import { type RawRequest, type RequestCall, type Targets, targetsOf } from './targets.js';

export type { AdapterLimit, AdapterOptions, ClientIpOption, KeyOf, LimitTarget } from './options.js';
export type { AdapterListEntry } from './lists.js';

export type Outcome =
  | { kind: 'skip' }
  /** Answered before deciding: no API key (401), the client already gone (400), or denied by the lists (403). */
  | { kind: 'answered'; status: 401 | 400 | 403; body: string }
  /** `settle`: the reservations of limits that settle (settle.ts), to run once the response has gone with its status. */
  | { kind: 'allowed'; headers: string[]; delayMs: number; settle?: (status: number) => Promise<void> }
  | { kind: 'refused'; status: 429 | 503; headers: string[]; body: string };

export type Limiter<Request> = (request: Request, raw: RawRequest | IncomingMessage) => Promise<Outcome>;

/** Checks the options once (a bad one throws a SluiceError naming it) and returns the per-request function. */
export function createRequestLimiter<Request>(options: AdapterOptions<Request>): Limiter<Request> {
  const checked = checkOptions(options);
  const decide = decider(checked);
  return (request, raw) => decide(request, raw).catch((error: unknown) => Promise.reject(adapterFailure(error)));
}

/**
 * A throw on the way to a decision is the app's own (a resolve or key function
 * that throws or returns a bad rule): the engine never rejects for the store.
 * It reaches the framework's error handler as a 500, never with the 4xx status
 * of the SluiceError it wraps: the client did nothing wrong.
 */
export function adapterFailure(error: unknown): Error {
  const message = error instanceof Error ? error.message : String(error);
  return Object.assign(new Error(`sluice adapter: ${message}`, { cause: error }), { status: 500, statusCode: 500 });
}

function decider<Request>(checked: CheckedOptions<Request>): Limiter<Request> {
  const { engine, headerOptions } = checked;
  return async (request, raw) => {
    const found = await targetsOf(checked, request, raw);
    const targets = checked.lists === undefined ? found : listed(checked, request, raw, found);
    if (targets.kind === 'denied') return DENIED;
    if (targets.kind === 'skip') return targets;
    if (targets.kind !== 'calls') {
      const name = targets.kind === 'no_client_address' ? 'bad_request' : targets.kind;
      return { kind: 'answered', status: GATEWAY_ERRORS[name].status, body: gatewayErrorBody(name) };
    }
    const { calls } = targets;
    const outcome = await engine.decideAll(calls);
    const governing = outcome.decisions[outcome.governing]!;
    if (!outcome.allowed && governing.source === 'closed') {
      const headers = ['Retry-After', String(retryAfterSeconds(governing))];
      return { kind: 'refused', status: GATEWAY_ERRORS.store_unavailable.status, headers, body: gatewayErrorBody('store_unavailable') };
    }
    const views = limitViews(calls, outcome);
    if (!outcome.allowed) {
      const { headers, body } = rejectionOf(views, outcome.governing, headerOptions);
      return { kind: 'refused', status: GATEWAY_ERRORS.rate_limited.status, headers, body };
    }
    const headers: string[] = [];
    pushLimitsHeaders(headers, views, outcome.governing, headerOptions);
    const settle = settlementOf(engine, calls, outcome.enforced ?? outcome.decisions, request);
    // Shaping: the request waits for the longest delay any limit asks.
    return { kind: 'allowed', headers, delayMs: Math.max(...outcome.decisions.map((decision) => decision.delayMs)), ...(settle ? { settle } : {}) };
  };
}

const DENIED: Outcome = { kind: 'answered', status: 403, body: gatewayErrorBody('denied') };

/** The targets after the lists: denied, none (allowed, or every limit lifted), or the calls left. A request refused before its limits (401) stays refused. */
function listed<Request>(checked: CheckedOptions<Request>, request: Request, raw: RawRequest, targets: Targets<Request>): Targets<Request> | { kind: 'denied' } {
  if (targets.kind !== 'calls' && targets.kind !== 'skip') return targets;
  const calls: readonly RequestCall<Request>[] = targets.kind === 'calls' ? targets.calls : [];
  const verdict = checked.lists!.check({
    route: '',
    tenant: calls.find((call) => call.tenant !== undefined)?.tenant, // resolve's
    headers: raw.headers,
    claims: checked.claims(request),
    now: Date.now(),
    ip: () => checked.clientIp.clientIp(raw.socket.remoteAddress, raw.headers),
  });
  if (verdict.action === 'deny') return { kind: 'denied' };
  if (verdict.action === 'allow') return { kind: 'skip' };
  if (verdict.exemptLimits.size === 0 || targets.kind === 'skip') return targets;
  const left = calls.filter((call) => !verdict.exemptLimits.has(call.limitId));
  return left.length === 0 ? { kind: 'skip' } : { kind: 'calls', calls: left };
}

/** Shaping in-process: hold the accepted request for the decision's delay. */
export const hold = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
