// The buckets' current state on a running instance, for explain: each rate
// limit's bucket read through the engine's inspect (a peek, cost 0: nothing is
// charged or written), so what it shows is what the next request would meet.
// A failing store gives the limit an error of its own, never a failed answer.
import type { Engine } from '../limiter/engine/engine.js';
import type { Explanation } from './explain.js';

export async function withBucketState(explanation: Explanation, engine: Pick<Engine, 'inspect'>): Promise<Explanation> {
  await Promise.all(
    explanation.limits.map(async (limit) => {
      if (limit.kind !== 'rate' || limit.bucket === undefined || limit.rule === undefined) return;
      try {
        const info = await engine.inspect(limit.bucket, limit.rule);
        const { remaining, limit: capacity, resetAfterMs, retryAfterMs } = info.decision;
        limit.state = { remaining, limit: capacity, resetAfterMs, retryAfterMs, ...(info.ttlMs !== undefined ? { ttlMs: info.ttlMs } : {}), location: info.location };
      } catch (error) {
        limit.state = { error: error instanceof Error ? error.message : String(error) };
      }
    }),
  );
  return explanation;
}
