// The fields of a `kind: concurrency` limit in the config file. Their checks
// against the limit's kind are in check-concurrency.ts.
import { z } from 'zod';

/** Most leases one key may hold: each is a member of the key's sorted set. */
export const MAX_CONCURRENCY = 100_000;
/** The lease TTL's bounds: renewed every third of it, so at least a second; a dead instance's slots come back within it. */
export const MIN_LEASE_TTL_MS = 1000;
export const MAX_LEASE_TTL_MS = 600_000;
export const DEFAULT_LEASE_TTL_MS = 30_000;

export const concurrencyFields = {
  /** Most requests (or WebSocket tunnels) of one key open at once, across every instance. */
  max: z
    .number()
    .int('must be a positive integer')
    .min(1, 'must be a positive integer')
    .max(MAX_CONCURRENCY, `must be at most ${MAX_CONCURRENCY}`)
    .optional()
    .meta({ description: '`kind: concurrency`: most requests (or WebSocket tunnels) of one key open at once, across every instance' }),
  /** How long a lease outlives an instance that died without releasing it. */
  leaseTtlMs: z
    .number()
    .int('must be an integer')
    .min(MIN_LEASE_TTL_MS, `must be at least ${MIN_LEASE_TTL_MS}`)
    .max(MAX_LEASE_TTL_MS, `must be at most ${MAX_LEASE_TTL_MS}`)
    .optional()
    .meta({ description: '`kind: concurrency`: how long a lease outlives an instance that died without releasing it', defaultText: `\`${DEFAULT_LEASE_TTL_MS}\`` }),
  /** What to do while the shared store is unreachable (a rate limit says it in its rule). */
  onStoreDown: z
    .enum(['fallback', 'open', 'closed'], 'must be fallback, open or closed')
    .optional()
    .meta({ description: '`kind: concurrency`: what to do while the shared store is unreachable (a rate limit says it in its rule)', defaultText: '`fallback`' }),
};
