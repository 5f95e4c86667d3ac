// The concurrency limiter for an engine: on the engine's Redis when it has one
// (the resilient engine: with the fallback and its live instance count; the
// plain engine over Redis: no fallback), else in process.
import { ConcurrencyLimiter } from '../limiter/concurrency/concurrency-limiter.js';
import { ADAPTIVE_DEADLINE } from '../limiter/deadline/deadline.js';
import { type Engine, StoreEngine } from '../limiter/engine/engine.js';
import { ResilientEngine } from '../limiter/engine/resilient-engine.js';
import { MemorySlotStore } from '../stores/memory-slots.js';
import { RedisStore } from '../stores/redis-store.js';
import { RedisSlotStore } from '../stores/redis/slots.js';

/** `fixedMs`: store.deadlineMs; absent, the resilient engine's own (adaptive) deadline, or the adaptive floor. */
export function concurrencyLimiterFor(engine: Engine, fixedMs: number | undefined, maxKeys?: number): ConcurrencyLimiter {
  const local = new MemorySlotStore(maxKeys);
  const store = engine instanceof ResilientEngine || engine instanceof StoreEngine ? engine.store : undefined;
  const resilient = engine instanceof ResilientEngine ? engine : undefined;
  const deadlineMs = fixedMs !== undefined ? () => fixedMs : resilient ? () => resilient.deadlineMs : () => ADAPTIVE_DEADLINE.floorMs;
  if (!(store instanceof RedisStore)) return new ConcurrencyLimiter({ local, instances: () => 1, deadlineMs });
  return new ConcurrencyLimiter({
    shared: new RedisSlotStore(store.client),
    local,
    instances: () => resilient?.instances ?? 1,
    deadlineMs,
    connection: store.connection,
    canFallBack: resilient !== undefined,
  });
}
