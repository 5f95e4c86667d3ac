// What the gateway tells the dashboard's history per request: its verdict, its
// status and its times, once the response is finished. Counted in memory by
// the observer and written out once a second: nothing per request leaves the
// process. The Exchange (one admitted request past its decision) lives here with it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LimitsDecision } from '../limiter/engine/engine.js';
import type { RequestLimit } from '../request-limits/types.js';
import type { LimitedTarget } from './route-target.js';
import type { RequestTrace } from '../tracing/types.js';
import type { Settlement } from '../usage/settlement.js';
import type { ReadBody } from './request-body.js';

/** One admitted request on its way past the decision: what refusing, holding and forwarding need. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  tenant: string | undefined;
  route: string;
  target: LimitedTarget;
  limits: RequestLimit[];
  /** Tells the observer the decision (watchRequest); undefined without one. */
  watched: RequestWatch | undefined;
  /** The verified JWT's claims (auth: jwt), for the headers forwardClaims sets upstream. */
  claims?: Readonly<Record<string, unknown>> | undefined;
  /** The request's span (tracing on), whose upstream call's span goes upstream as traceparent. */
  trace: RequestTrace | undefined;
  /** The body already read for the limits (usage/request-json.ts): sent on, not read again. */
  body?: ReadBody | undefined;
  /** Its limits priced by usage or counted by outcome, settled once the response ends (usage/settlement.ts). */
  settlement?: Settlement | undefined;
}

export interface RequestObserver {
  /** verdict: 0 allowed, 1 refused, 2 admitted by a shadow rule that would have refused, -1 answered before the decision (no decision time). */
  request(route: string, verdict: number, status: number, requestMs: number, decisionMs: number | undefined): void;
}

/** The history's bucket of requests no route matched (a 404, or a 401 before it, or a 400 node could not parse). */
export const NO_ROUTE = '(no route)';
/** The verdict of a request answered before the limiter decided: it counts in its status class only. */
export const NO_VERDICT = -1;

/** 0 allowed, 1 refused, 2 admitted although a shadow limit would have refused. */
export function verdictOf(outcome: LimitsDecision): number {
  if (!outcome.allowed) return 1;
  return outcome.enforced?.some((decision) => !decision.allowed) ? 2 : 0;
}

/** One request watched from its arrival: the gateway names its route once matched and marks it reaching the decision. */
export interface RequestWatch {
  route: string;
  /** It reached the decision step (a concurrency gate or the rate limits). */
  reached: boolean;
  decided(outcome: LimitsDecision): void;
}

/** Starts timing a request as it arrives; undefined without an observer. Told the observer when its response is finished. */
export function watchRequest(observer: RequestObserver | undefined, res: ServerResponse): RequestWatch | undefined {
  if (!observer) return undefined;
  const started = performance.now();
  let decisionMs: number | undefined;
  let verdict: number | undefined;
  const watch: RequestWatch = {
    route: NO_ROUTE,
    reached: false,
    decided(outcome) {
      decisionMs = performance.now() - started;
      verdict = verdictOf(outcome);
    },
  };
  res.once('finish', () => {
    const elapsed = performance.now() - started;
    if (!watch.reached) {
      observer.request(watch.route, NO_VERDICT, res.statusCode, elapsed, undefined);
      return;
    }
    // No rate decision: refused by a concurrency limit (429 / 503), or a route with concurrency limits only.
    const counted = verdict ?? (res.statusCode === 429 || res.statusCode === 503 ? 1 : 0);
    observer.request(watch.route, counted, res.statusCode, elapsed, decisionMs ?? 0);
  });
  return watch;
}
