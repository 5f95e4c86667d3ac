// A route's `kind: concurrency` limits, checked like its rate limits (key,
// unique id) plus their own fields, each error naming its field.
import type { LimitEntry } from '../request-limits/config-schema.js';
import { type LimitCheckContext, type RouteLimitInput, checkLimitKey } from './check-limits.js';
import { DEFAULT_LEASE_TTL_MS } from '../request-limits/concurrency-schema.js';
import type { ConcurrencyLimitConfig } from '../request-limits/types.js';

export function checkRouteConcurrency(route: RouteLimitInput, index: number, ctx: LimitCheckContext): ConcurrencyLimitConfig[] {
  return (route.limits ?? []).flatMap((entry, j) => (entry.kind === 'concurrency' ? [checkConcurrencyLimit(route, entry, ['routes', index, 'limits', j], ctx)] : []));
}

function checkConcurrencyLimit(route: RouteLimitInput, entry: LimitEntry, at: (string | number)[], ctx: LimitCheckContext): ConcurrencyLimitConfig {
  const key = checkLimitKey(route, entry, at, ctx);
  if (entry.rule !== undefined) ctx.fail([...at, 'rule'], 'a concurrency limit has no rule: it counts open requests, set max (and optionally leaseTtlMs, onStoreDown)');
  if (entry.penalty !== undefined) ctx.fail([...at, 'penalty'], 'applies to rate limits only: a concurrency limit refuses while requests are open, there is nothing to count');
  for (const field of ['cost', 'count'] as const) if (entry[field] !== undefined) ctx.fail([...at, field], 'applies to rate limits only: a concurrency limit counts open requests, not units');
  if (key.kind === 'body') ctx.fail([...at, 'key'], 'a concurrency limit cannot be keyed by the body: it is decided before the body is read');
  if (entry.max === undefined) ctx.fail([...at, 'max'], 'is required with kind: concurrency (the most requests of one key open at once), a positive integer');
  return { id: entry.id, key, max: entry.max as number, leaseTtlMs: entry.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS, onStoreDown: entry.onStoreDown ?? 'fallback' };
}
