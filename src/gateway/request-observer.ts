// What the gateway tells the dashboard's history per request: its verdict, its
// status and its times, once the response is finished. Counted in memory by
// the observer and written out once a second: nothing per request leaves the
// process. The Exchange (one admitted request past its decision) lives here with it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LimitsDecision } from '../limiter/engine.js';
import type { RequestLimit } from '../limits/types.js';
import type { LimitedTarget } from './route-target.js';

/** One admitted request on its way past the decision: what refusing, holding and forwarding need. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  tenant: string | undefined;
  route: string;
  target: LimitedTarget;
  limits: RequestLimit[];
  /** Tells the observer the decision (watchRequest); undefined without one. */
  watched: ((outcome: LimitsDecision) => void) | undefined;
}

export interface RequestObserver {
  /** verdict: 0 allowed, 1 refused, 2 admitted by a shadow rule that would have refused. */
  request(route: string, verdict: number, status: number, requestMs: number, decisionMs: number): void;
}

/** 0 allowed, 1 refused, 2 admitted although a shadow limit would have refused. */
export function verdictOf(outcome: LimitsDecision): number {
  if (!outcome.allowed) return 1;
  return outcome.enforced?.some((decision) => !decision.allowed) ? 2 : 0;
}

/** Starts timing a request about to be decided; call the result with the decision. Undefined without an observer. */
export function watchRequest(observer: RequestObserver | undefined, res: ServerResponse, route: string): ((outcome: LimitsDecision) => void) | undefined {
  if (!observer) return undefined;
  const started = performance.now();
  let decisionMs = 0;
  let verdict: number | undefined;
  res.once('finish', () => {
    // No rate decision: refused by a concurrency limit (429 / 503), or a route with concurrency limits only.
    const counted = verdict ?? (res.statusCode === 429 || res.statusCode === 503 ? 1 : 0);
    observer.request(route, counted, res.statusCode, performance.now() - started, decisionMs);
  });
  return (outcome) => {
    decisionMs = performance.now() - started;
    verdict = verdictOf(outcome);
  };
}
