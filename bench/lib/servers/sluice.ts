// Sluice's gateway in its own process: one route to the upstream, tenants from
// X-Api-Key, a rule so large nothing is refused. `limiter: none` hands the
// gateway an engine that allows without asking any store: the gateway's own
// cost with no limiting at all (the gateway has no switch to turn limiting off).
// `limiter: ping` is that engine plus one bare Redis PING per request (ioredis):
// the floor any Redis-backed limiter pays for its round trip, to tell it apart
// from what Sluice's own decision adds. `limiter: script` is that engine plus
// one bare EVALSHA of Sluice's token-bucket script (ioredis, fixed arguments):
// the script's round trip without Sluice's code around it, so the decision
// above PING splits into Redis's part and Sluice's. `limiter: store` is that
// engine with Sluice's Redis store (stores/redis-store.ts: its script call,
// coalescer and decoding) in place of the bare EVALSHA, and no engine around
// it: Sluice's own code above the bare call splits into the store's part and
// the engine's (bench/own-code.ts). `tls` serves HTTPS
// (HTTP/2 and HTTP/1.1 by ALPN); `upstream` may list instances, balanced by
// the gateway; `tracing` turns OpenTelemetry tracing on (bench/gateway-tracing.ts);
// `usage` prices the route's limit by the response's `usage.total_tokens`, so
// every answer is read while it is relayed (bench/gateway-stream.ts).
// Sluice runs from the built package (built.ts), as users run it.

import { Redis } from 'ioredis';
import type { Decision } from '../../../src/core/decision.js';
import type { Engine } from '../../../src/limiter/engine/engine.js';
import { fromDist } from '../built.js';
import { args, serve } from './serve.js';

const { startSluice } = await fromDist<typeof import('../../../src/app.js')>('app.js');
const { parseConfig } = await fromDist<typeof import('../../../src/decision-service/load-config.js')>('decision-service/load-config.js');
const { ChainStats } = await fromDist<typeof import('../../../src/limiter/metrics/stats.js')>('limiter/metrics/stats.js');
const { scriptSha, scriptSource } = await fromDist<typeof import('../../../src/stores/redis/scripts.js')>('stores/redis/scripts.js');
const { RedisStore } = await fromDist<typeof import('../../../src/stores/redis-store.js')>('stores/redis-store.js');
const { PlanCache } = await fromDist<typeof import('../../../src/limiter/engine/plan.js')>('limiter/engine/plan.js');

interface Args {
  upstream: string | string[];
  tls?: { cert: string; key: string };
  limiter: 'none' | 'ping' | 'script' | 'store' | 'memory' | 'redis';
  redisUrl?: string;
  /** Automatic hot-key leasing off: every request is one Redis script call, like the peers. */
  exact?: boolean;
  /** Tracing on, exporting over OTLP/HTTP (protobuf) to `endpoint`, parentbased_traceidratio at `ratio`. */
  tracing?: { endpoint: string; ratio: number };
  /** The route's limit priced by usage: the response read for `usage.total_tokens` (a JSON body, or a stream's last event carrying it). */
  usage?: boolean;
}

const ALLOW: Decision = { allowed: true, remaining: 1_000_000, limit: 1_000_000, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'memory' };

const allowAll: Engine = {
  decide: async () => ALLOW,
  decideAll: async (calls) => ({ allowed: true, decisions: calls.map(() => ALLOW), governing: 0 }),
  peek: async () => ALLOW,
  reset: async () => {},
  inspect: async () => ({ state: undefined, decision: ALLOW, ttlMs: undefined, location: 'none' }),
  listBlocked: async () => [],
  liftBlock: async () => false,
  health: () => ({ mode: 'memory', storeReachable: true }),
  counters: () => new ChainStats().snapshot(1),
  close: async () => {},
};

/** allowAll after one Redis call (`call`, per tenant or bucket tag) on a connection of its own; `prepare` done before the server listens (its failure is the server's start error). */
async function callThenAllow(url: string, call: (redis: Redis, tenant: string) => Promise<unknown>, prepare?: (redis: Redis) => Promise<unknown>): Promise<Engine> {
  const redis = new Redis(url);
  await prepare?.(redis);
  return {
    ...allowAll,
    decide: async (bucket) => {
      await call(redis, bucket.tag);
      return ALLOW;
    },
    decideAll: async (calls) => {
      await call(redis, calls[0]!.bucket.tag);
      return allowAll.decideAll(calls);
    },
    close: async () => {
      redis.disconnect();
    },
  };
}

/**
 * Each request's one limit decided by Sluice's Redis store alone: its decision
 * handed to the gateway as is, no engine (steps, guard, fallback) around it.
 * The bucket's key comes from the engine's own plan cache, built once per
 * bucket, so this row holds the store's call and not the key's building.
 */
function storeOnly(url: string): Engine {
  const store = new RedisStore(new Redis(url));
  const plans = new PlanCache();
  return {
    ...allowAll,
    decideAll: async (calls) => {
      const { bucket, rule, cost } = calls[0]!;
      const plan = plans.plan(bucket, rule, 1);
      const decision = await store.consume(plan.bucket, plan.rule, cost);
      return { allowed: decision.allowed, decisions: calls.map(() => decision), governing: 0 };
    },
    close: () => store.close(),
  };
}

const { upstream, limiter, redisUrl, exact, tls, tracing, usage } = args<Args>();
const BIG = { policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000_000 };
const usageLimits = usage ? { limits: [{ id: 'tokens', key: 'tenant', rule: BIG, cost: { estimate: 1, from: { json: 'usage.total_tokens' } } }] } : {};
const config = parseConfig(
  JSON.stringify({
    listen: '127.0.0.1:0',
    routes: [{ id: 'create-order', path: '/orders', upstream, timeoutMs: 10_000, ...usageLimits }],
    tenants: { header: 'X-Api-Key', unknownKeys: 'default-rule', keys: [] },
    defaultRule: BIG,
    store: limiter === 'redis' ? { type: 'redis', url: redisUrl } : { type: 'memory' },
    ...(exact ? { resilience: { hotKey: { autoLeaseRatePerSec: 0 } } } : {}),
    log: { level: 'silent' },
    ...(tls ? { tls } : {}),
    ...(tracing ? { tracing: { enabled: true, endpoint: tracing.endpoint, sampler: 'parentbased_traceidratio', samplerArg: tracing.ratio } } : {}),
  }),
  { source: 'bench' },
);
// The token bucket's arguments as Sluice sends them: key, cost, '' (Redis's clock), capacity, rate, field.
const bareScript = (redis: Redis, tenant: string) => redis.evalsha(scriptSha('token_bucket'), 1, `bench:{${tenant}}`, 1, '', 1e9, 1e9, 'create-order');
const engines: Partial<Record<Args['limiter'], () => Engine | Promise<Engine>>> = {
  none: () => allowAll,
  ping: () => callThenAllow(redisUrl!, (redis) => redis.ping()),
  script: () => callThenAllow(redisUrl!, bareScript, (redis) => redis.script('LOAD', scriptSource('token_bucket'))),
  store: () => storeOnly(redisUrl!),
};
await serve(async () => {
  const engine = await engines[limiter]?.();
  return startSluice(config, engine ? { engine } : {});
});
