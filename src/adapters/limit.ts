// What the in-process adapters share: which bucket a request falls in, one
// engine decision, and the same headers and 429 body as the gateway.
import type { Decision } from '../core/decision.js';
import { GATEWAY_ERRORS, gatewayErrorBody } from '../core/error-codes.js';
import { isValidId } from '../core/ids.js';
import { parseRule, type Rule } from '../core/rule.js';
import { SluiceError } from '../core/errors.js';
import { type HeaderOptions, pushLimitHeaders, rejection, retryAfterSeconds } from '../gateway/headers.js';
import type { Engine } from '../limiter/engine.js';

export interface LimitTarget {
  tenant: string;
  route: string;
  rule: Rule;
  cost?: number;
}

export interface AdapterOptions<Request> {
  engine: Engine;
  /** One rule for every request; the tenant comes from `header`, the route id from `route`. */
  rule?: Rule;
  /** Route id used with `rule` (default `default`). */
  route?: string;
  /** Header naming the tenant, used with `rule` (default `x-api-key`). */
  header?: string;
  /** Per request: which bucket and rule, or undefined to let the request through unlimited. */
  resolve?: (request: Request) => LimitTarget | undefined | Promise<LimitTarget | undefined>;
  /** IETF RateLimit headers and problem+json bodies, as in the gateway config. */
  headers?: Partial<HeaderOptions>;
}

export type Outcome =
  | { kind: 'skip' }
  | { kind: 'unauthorized'; status: 401; body: string }
  | { kind: 'allowed'; headers: string[]; delayMs: number }
  | { kind: 'refused'; status: 429 | 503; headers: string[]; body: string };

export type Limiter<Request> = (request: Request, header: (name: string) => string | undefined) => Promise<Outcome>;

/** Checks the options once and returns the per-request function. */
export function createRequestLimiter<Request>(options: AdapterOptions<Request>): Limiter<Request> {
  if (!options.engine) throw new SluiceError('ERR_CONFIG_INVALID', 'is required', 'engine');
  if (!options.rule === !options.resolve) throw new SluiceError('ERR_CONFIG_INVALID', 'give exactly one of rule or resolve', 'rule');
  const fixedRule = options.rule ? parseRule(options.rule, 'rule') : undefined;
  const fixedRoute = options.route ?? 'default';
  if (!isValidId(fixedRoute)) throw new SluiceError('ERR_CONFIG_INVALID', 'must be an id', 'route');
  const header = (options.header ?? 'x-api-key').toLowerCase();
  const headerOptions: HeaderOptions = { ietf: options.headers?.ietf ?? false, problemJson: options.headers?.problemJson ?? false };
  const { engine, resolve } = options;

  return async (request, headerOf) => {
    let target: LimitTarget | undefined;
    if (resolve) {
      target = await resolve(request);
      if (target === undefined) return { kind: 'skip' };
    } else {
      const tenant = headerOf(header);
      if (!isValidId(tenant)) return { kind: 'unauthorized', status: GATEWAY_ERRORS.missing_api_key.status, body: gatewayErrorBody('missing_api_key') };
      target = { tenant, route: fixedRoute, rule: fixedRule! };
    }
    const decision: Decision = await engine.decide(target.tenant, target.route, target.rule, target.cost);
    if (decision.source === 'closed') {
      const headers = ['Retry-After', String(retryAfterSeconds(decision))];
      return { kind: 'refused', status: GATEWAY_ERRORS.store_unavailable.status, headers, body: gatewayErrorBody('store_unavailable') };
    }
    if (!decision.allowed) {
      const { headers, body } = rejection(decision, target.route, target.rule, headerOptions);
      return { kind: 'refused', status: GATEWAY_ERRORS.rate_limited.status, headers, body };
    }
    const headers: string[] = [];
    pushLimitHeaders(headers, decision, target.route, target.rule, headerOptions);
    return { kind: 'allowed', headers, delayMs: decision.delayMs };
  };
}

/** Shaping in-process: hold the accepted request for the decision's delay. */
export const hold = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
