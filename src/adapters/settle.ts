// Reserve, then settle, in the adapters: a limit whose cost the app only
// knows once it has answered (the tokens an LLM call used, the rows a query
// returned) reserves its `cost` when the request is admitted; once the
// response has been sent, its `settle` function gives the units used and the
// difference is charged (a debt past empty, repaid from the refill) or given
// back, through the engine's adjust: the gateway's settlement
// (usage/settlement.ts), with the usage read from the app rather than from
// the response. A limit with `count` gives its reservation back for the
// answers it does not count. A store that fails the adjust is counted, never
// an error the client sees (the response is already sent).
import type { Decision } from '../core/decision.js';
import { capacityOf } from '../policies/rule.js';
import type { Engine } from '../limiter/engine/engine.js';
import { usageSettlements } from '../metrics/usage.js';
import { adjustCounted, CHARGED } from '../usage/settlement.js';
import { counts } from '../usage/types.js';
import { judgeUsage } from '../usage/usage-value.js';
import type { RequestCall } from './targets.js';

/** Settles an admitted request's reservations once its response has gone with `status`; undefined when no limit settles. */
export function settlementOf<Request>(engine: Pick<Engine, 'adjust'>, calls: readonly RequestCall<Request>[], decisions: readonly Decision[], request: Request): ((status: number) => Promise<void>) | undefined {
  if (!calls.some((call) => call.settle !== undefined || call.count !== undefined)) return undefined;
  return (status) => {
    const work: Promise<void>[] = [];
    for (let i = 0; i < calls.length; i++) {
      const call = calls[i]!;
      const decision = decisions[i];
      if ((call.settle === undefined && call.count === undefined) || decision === undefined || !decision.allowed) continue;
      if (!CHARGED.has(decision.source)) {
        usageSettlements.inc({ limit: call.limitId, result: 'store_down' });
        continue;
      }
      const { delta, result } = deltaOf(call, request, status);
      if (delta === 0) usageSettlements.inc({ limit: call.limitId, result });
      else work.push(adjustCounted(engine, call, delta).then(() => void usageSettlements.inc({ limit: call.limitId, result })));
    }
    return Promise.all(work).then(() => undefined);
  };
}

/** What the limit owes beyond its reservation (negative: to give back), and the result counted. */
function deltaOf<Request>(call: RequestCall<Request>, request: Request, status: number): { delta: number; result: string } {
  if (call.count !== undefined && !counts(call.count, status)) return { delta: -call.cost, result: 'not_counted' };
  if (call.settle === undefined) return { delta: 0, result: 'counted' };
  let raw: unknown;
  try {
    raw = call.settle(request, status);
  } catch {
    // The app's function failed after the answer was sent: the reservation stands, as for a missing value.
    return { delta: 0, result: 'fallback_missing' };
  }
  if (raw === undefined) return { delta: 0, result: 'usage' };
  const judged = judgeUsage(raw, capacityOf(call.rule));
  return 'units' in judged ? { delta: judged.units - call.cost, result: 'usage' } : { delta: 0, result: `fallback_${judged.bad}` };
}
