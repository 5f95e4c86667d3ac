// A concurrency limiter in process only, for a gateway built without the
// app's limiter (one instance); engine-factory/concurrency-limiter-for.ts
// builds the one over an engine's Redis.
import { MemorySlotStore } from '../../stores/memory-slots.js';
import { ConcurrencyLimiter } from './concurrency-limiter.js';

/** In process only: a gateway built without the app's limiter (one instance). */
export function localConcurrencyLimiter(): ConcurrencyLimiter {
  return new ConcurrencyLimiter({ local: new MemorySlotStore(), instances: () => 1, deadlineMs: () => 0 });
}
