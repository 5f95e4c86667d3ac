// GET /tenants/{id}/usage (role `read`): for each limit that counts the
// tenant's requests (explain/tenant-limits.ts), its rule and where it came
// from, what is left and when it resets (a peek that charges nothing), and
// what the tenant consumed on it over the last hour and day (the usage
// history: the cluster's on Redis, this instance's on the memory store). A
// store that does not answer gives its part an error of its own, never a
// failed answer.
import { assertValidId } from '../core/ids.js';
import { SluiceError } from '../core/errors.js';
import { type TenantLimit, tenantLimits } from '../explain/tenant-limits.js';
import type { Engine } from '../limiter/engine/engine.js';
import { emptyUsageCell, type TenantConsumption, type UsageCell, type UsageHistory } from '../usage/usage-history.js';
import type { ExplainSource } from './explain-handler.js';
import type { Reply } from './handlers.js';

export interface LimitUsage extends TenantLimit {
  /** The tenant's bucket now; absent for a `tenant+ip` limit (a bucket per client address). */
  state?: { remaining: number; limit: number; resetAfterMs: number; resetAt: string; retryAfterMs: number } | { error: string };
  lastHour?: UsageCell;
  lastDay?: UsageCell;
}

export interface TenantUsage {
  tenant: string;
  at: string;
  /** `cluster`: every instance's counts (Redis); `local`: this instance's only (the memory store). */
  scope: 'cluster' | 'local';
  limits: LimitUsage[];
  /** Why the consumption is missing, when the usage history did not answer. */
  historyError?: string;
}

export async function tenantUsage(source: ExplainSource | undefined, engine: Pick<Engine, 'inspect'>, history: UsageHistory | undefined, tenant: string, now = Date.now()): Promise<Reply> {
  assertValidId(tenant, 'tenant');
  if (!source || !history) throw new SluiceError('ERR_NOT_FOUND', 'tenant usage is not available on this instance (no gateway config beside this admin API)');
  const limits = tenantLimits(source(), tenant);
  const [states, consumption] = await Promise.all([Promise.all(limits.map((limit) => stateOf(engine, limit, now))), consumptionOf(history, tenant, now)]);
  const body: TenantUsage = {
    tenant,
    at: new Date(now).toISOString(),
    scope: history.scope,
    limits: limits.map((limit, i) => ({
      ...limit,
      ...(states[i] ? { state: states[i] } : {}),
      ...('error' in consumption ? {} : { lastHour: consumption.lastHour.get(limit.id) ?? emptyUsageCell(), lastDay: consumption.lastDay.get(limit.id) ?? emptyUsageCell() }),
    })),
    ...('error' in consumption ? { historyError: consumption.error } : {}),
  };
  return { status: 200, body };
}

async function stateOf(engine: Pick<Engine, 'inspect'>, limit: TenantLimit, now: number): Promise<LimitUsage['state']> {
  if (limit.bucket === undefined || limit.rule === undefined) return undefined;
  try {
    const { decision } = await engine.inspect(limit.bucket, limit.rule);
    const { remaining, limit: capacity, resetAfterMs, retryAfterMs } = decision;
    return { remaining, limit: capacity, resetAfterMs, resetAt: new Date(now + resetAfterMs).toISOString(), retryAfterMs };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

async function consumptionOf(history: UsageHistory, tenant: string, now: number): Promise<TenantConsumption | { error: string }> {
  try {
    return await history.read(tenant, Math.floor(now / 1000));
  } catch (error) {
    return { error: `the usage history did not answer: ${error instanceof Error ? error.message : String(error)}` };
  }
}
