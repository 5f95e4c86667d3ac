// Reserve, then settle: a request's limits priced by usage (or counted by
// outcome) were charged their estimate when it was admitted; once its
// response has ended (or was cut) each is settled: the difference between
// what the response used and what was reserved is charged (a debt past empty,
// repaid from the refill) or given back, through the engine's adjust (on
// Redis one atomic adjust script per limit). It runs after the last byte has
// been handed to the client, and a store that fails it is counted, never an
// error the client sees.
import type { Decision } from '../core/decision.js';
import type { Bucket } from '../core/ids.js';
import { capacityOf } from '../policies/rule.js';
import type { Engine } from '../limiter/engine/engine.js';
import type { Rule } from '../policies/rule.js';
import { usageSettledUnits, usageSettleFailures, usageSettlements } from '../metrics/usage.js';
import { UsageReader } from './usage-reader.js';
import { judgeUsage } from './usage-value.js';
import { type CountRule, counts, type UsageCost } from './types.js';

/** One limit of an admitted request as the settlement needs it (request-limits/types.ts RequestLimit has these). */
export interface SettledLimit {
  readonly limitId: string;
  readonly bucket: Bucket;
  readonly rule: Rule;
  /** What was reserved. */
  readonly cost: number;
  readonly usage?: UsageCost | undefined;
  readonly count?: CountRule | undefined;
}

/** How the forwarded request ended, as the settlement needs it. */
export interface ResponseEnd {
  /** The status the client was answered with (the upstream's, or the gateway's 502/504). */
  readonly status: number;
  /** The upstream's answer was relayed whole. */
  readonly complete: boolean;
  /** The client went away before the end. */
  readonly aborted: boolean;
}

/** Whether any of an admitted request's limits is priced by usage or counted by outcome: only then is there something to settle. */
function needsSettlement(limits: readonly Pick<SettledLimit, 'usage' | 'count'>[]): boolean {
  for (const limit of limits) if (limit.usage !== undefined || limit.count !== undefined) return true;
  return false;
}

/** Sources a decision's charge stands in the store (not the local fallback's, not an `open` pass). */
export const CHARGED = new Set<Decision['source']>(['redis', 'memory', 'cache', 'shadow']);

export class Settlement {
  readonly reader: UsageReader;

  private constructor(
    private readonly engine: Pick<Engine, 'adjust'>,
    private readonly limits: readonly SettledLimit[],
    private readonly decisions: readonly Decision[],
    private readonly onAdjusted: ((limit: SettledLimit, delta: number) => void) | undefined,
  ) {
    this.reader = new UsageReader(limits.flatMap((limit) => (limit.usage ? [limit.usage.from] : [])));
  }

  /** A settlement for an admitted request whose limits need one; undefined when none does. */
  /** `onAdjusted` hears of each adjustment the store took (each tenant's usage: usage-recorder.ts settled). */
  static of(engine: Pick<Engine, 'adjust'>, limits: readonly SettledLimit[], decisions: readonly Decision[], onAdjusted?: (limit: SettledLimit, delta: number) => void): Settlement | undefined {
    if (!needsSettlement(limits)) return undefined;
    return new Settlement(engine, limits, decisions, onAdjusted);
  }

  /** Settles every limit (never rejects); resolves once the store has answered each. */
  settle(end: ResponseEnd): Promise<void> {
    const work: Promise<void>[] = [];
    this.limits.forEach((limit, i) => {
      if (limit.usage === undefined && limit.count === undefined) return;
      const decision = this.decisions[i];
      if (decision === undefined || !decision.allowed) return;
      if (!CHARGED.has(decision.source)) {
        usageSettlements.inc({ limit: limit.limitId, result: 'store_down' });
        return;
      }
      const { delta, result } = this.deltaOf(limit, end);
      // Counted once the store has answered: what /metrics shows as settled is in the bucket.
      if (delta === 0) usageSettlements.inc({ limit: limit.limitId, result });
      else work.push(this.adjust(limit, delta).then(() => usageSettlements.inc({ limit: limit.limitId, result })));
    });
    return Promise.all(work).then(() => undefined);
  }

  /** What the limit owes beyond its reservation (negative: to give back), and the result counted. */
  private deltaOf(limit: SettledLimit, end: ResponseEnd): { delta: number; result: string } {
    if (limit.count !== undefined && !counts(limit.count, end.status)) return { delta: -limit.cost, result: 'not_counted' };
    const usage = limit.usage;
    if (usage === undefined) return { delta: 0, result: 'counted' };
    // The upstream never answered (refused, timed out before its head): nothing was used.
    if (!this.reader.headSeen && !end.aborted) return { delta: -limit.cost, result: 'no_response' };
    const raw = this.reader.result(usage.from, end.complete);
    const judged = 'raw' in raw ? judgeUsage(raw.raw, capacityOf(limit.rule)) : raw;
    if ('units' in judged) return { delta: judged.units - limit.cost, result: 'usage' };
    return { delta: usage.fallback - limit.cost, result: `fallback_${judged.bad}` };
  }

  private async adjust(limit: SettledLimit, delta: number): Promise<void> {
    if (await adjustCounted(this.engine, limit, delta)) this.onAdjusted?.(limit, delta);
  }
}

/** Charges `delta` (negative: gives back) to the limit's bucket; counted either way, never thrown. Whether the store took it. */
export async function adjustCounted(engine: Pick<Engine, 'adjust'>, limit: Pick<SettledLimit, 'limitId' | 'bucket' | 'rule'>, delta: number): Promise<boolean> {
  try {
    if (engine.adjust === undefined) throw new Error('the engine cannot adjust a bucket');
    await engine.adjust(limit.bucket, limit.rule, delta);
    usageSettledUnits.inc({ limit: limit.limitId, direction: delta > 0 ? 'charged' : 'refunded' }, Math.abs(delta));
    return true;
  } catch {
    usageSettleFailures.inc({ limit: limit.limitId });
    return false;
  }
}
