// Builds the engine the gateway decides with:
//   createEngine({})                                  → StoreEngine over a MemoryStore (one instance, no Redis)
//   createEngine({ redis: { url: 'redis://…' } })     → ResilientEngine over a RedisStore and the decision chain (resilient-engine.ts buildChain)
//   createEngine({ redis: existingIoredisClient })    → the same, over a client the caller keeps and closes
// Every other option is in resilienceConfigSchema, with its default.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import type { Logger, pino as Pino } from 'pino';
import { Membership } from '../cluster/membership.js';
import { RegionRebalancer } from '../cluster/region-rebalancer.js';
import { SluiceError } from '../core/errors.js';
import { zodToSluiceError } from '../policies/rule.js';
import { type Engine, StoreEngine } from '../limiter/engine/engine.js';
import { type ResilienceConfig, type ResilienceConfigInput, resilienceConfigSchema } from '../limiter/engine/resilience-config.js';
import { buildChain, ResilientEngine } from '../limiter/engine/resilient-engine.js';
import { InstanceCount } from '../limiter/fallback/instances.js';
import { unreplicatedAdmissions } from '../metrics/registry.js';
import { type Clock, systemClock } from '../stores/clock.js';
import { MemoryStore } from '../stores/memory-store.js';
import { RedisStore } from '../stores/redis-store.js';
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import type { RedisClient } from '../stores/redis/scripts.js';
import type { SharedStore } from '../stores/store.js';

/** What the engine is wired to, apart from its validated options. */
export interface EngineWiring {
  /** Where buckets live: a target to connect to (the engine owns the client), or a client (the caller owns it). Absent = memory. */
  redis?: RedisTarget | RedisClient;
  /** Default: pino at info level, named `sluice`. */
  logger?: Logger;
  /** Names this instance in the membership set. Default: host-pid-random. */
  instanceId?: string;
  /** Memory store only: most buckets kept. */
  maxKeys?: number;
  /** Tests only: the local clock. */
  now?: Clock;
  /** Wraps the Redis store before the chain uses it (tracing's spans around each call); absent: the store as it is. */
  wrapStore?: <S extends SharedStore>(store: S) => S;
}

export type CreateEngineOptions = ResilienceConfigInput & EngineWiring;

/** The library's entry: validates the options (an error names the option, e.g. `memberTtlMs`), then builds. */
export function createEngine(options: CreateEngineOptions = {}): Engine {
  const { redis, logger, instanceId, maxKeys, now, wrapStore, ...rest } = options;
  if (redis !== undefined) checkTarget(redis);
  return buildEngine(validated(rest), { redis, logger, instanceId, maxKeys, now, wrapStore });
}

/** The same over Redis, typed as the resilient engine (its membership, for tests and tools). */
export function createResilientEngine(options: CreateEngineOptions & { redis: RedisTarget | RedisClient }): ResilientEngine {
  const { redis, logger, instanceId, maxKeys, now, wrapStore, ...rest } = options;
  checkTarget(redis);
  return buildResilientEngine(validated(rest), { redis, logger, instanceId, maxKeys, now, wrapStore });
}

/**
 * A target that names no server: ioredis would connect to 127.0.0.1:6379 in
 * silence, so `{ url: process.env.REDIS_URL }` with the variable unset would
 * share buckets with whatever Redis runs there, or with none.
 */
function checkTarget(redis: RedisTarget | RedisClient): void {
  if (isClient(redis)) return;
  if ('url' in redis && (redis.url === undefined || redis.url === '')) {
    throw new SluiceError('ERR_CONFIG_INVALID', `is ${redis.url === undefined ? 'undefined' : 'empty'} (an unset environment variable?): give a redis:// or rediss:// URL, or leave redis out for the memory store`, 'redis.url');
  }
  if (redis.url === undefined && !(redis.cluster && redis.cluster.length > 0) && redis.sentinel === undefined) {
    throw new SluiceError('ERR_CONFIG_INVALID', 'needs url, cluster or sentinel (or leave redis out for the memory store)', 'redis');
  }
}

function validated(input: ResilienceConfigInput): ResilienceConfig {
  const parsed = resilienceConfigSchema.safeParse(input);
  if (!parsed.success) throw zodToSluiceError(parsed.error, '', 'ERR_CONFIG_INVALID');
  return parsed.data;
}

/** Builds the engine from options already validated (by createEngine, or with the config file). */
export function buildEngine(config: ResilienceConfig, wiring: EngineWiring): Engine {
  const { redis, maxKeys, now } = wiring;
  if (redis === undefined) return new StoreEngine(new MemoryStore({ ...(maxKeys ? { maxKeys } : {}), ...(now ? { now } : {}) }));
  return buildResilientEngine(config, { ...wiring, redis });
}

/** The engine over Redis: the store, membership, the decision chain and the optional rebalancer. */
export function buildResilientEngine(config: ResilienceConfig, wiring: EngineWiring & { redis: RedisTarget | RedisClient }): ResilientEngine {
  const { redis, instanceId } = wiring;
  const logger = wiring.logger ?? defaultLogger();
  const now = wiring.now ?? systemClock;
  const ownsStore = !isClient(redis);
  const client = isClient(redis) ? redis : connectRedis(redis);
  // Always listened to, a caller's client too: the engine answers for the store
  // while it is away, so ioredis must not print "Unhandled error event".
  client.on('error', (error: Error) => logger.debug({ err: error }, 'Redis connection error'));
  const wait = config.replicaWait && { ...config.replicaWait, onUnreplicated: () => unreplicatedAdmissions.inc() };
  const plain = new RedisStore(client, { connectGraceMs: config.connectGraceMs, now, ...(wait ? { wait } : {}) });
  const store = wiring.wrapStore ? wiring.wrapStore(plain) : plain;
  // Said once per new reason, at error level: a refused password must not hide among reconnect noise.
  store.problem.onChange((reason) => {
    if (reason !== undefined) logger.error({ reason }, 'Redis connection failed; deciding with the local fallback until it works');
  });
  const membership = new Membership({
    client,
    instanceId: instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    heartbeatMs: config.heartbeatMs,
    ttlMs: config.memberTtlMs,
    region: config.region,
    logger,
  });
  const instances = new InstanceCount(config.instances, membership);
  const chain = buildChain({ ...config, store, instances, logger, now });
  const rebalancer = rebalancerFor(config, client, logger);
  return new ResilientEngine({
    store,
    ownsStore,
    chain,
    membership,
    instances,
    region: config.region,
    defaultRegionShare: config.defaultRegionShare,
    adminTimeoutMs: config.adminTimeoutMs,
    ...(rebalancer ? { rebalancer } : {}),
  });
}

/** The region-share rebalancer when the config asks for one: this region's client and one per peer region. */
function rebalancerFor(config: ResilienceConfig, client: RedisClient, logger: Logger): RegionRebalancer | undefined {
  if (!config.rebalance || config.region === undefined) return undefined;
  const { peers, intervalMs, minShare, maxShare, maxStep } = config.rebalance;
  const peerClients = Object.fromEntries(Object.entries(peers).map(([name, target]) => [name, connectRedis(target)]));
  for (const peer of Object.values(peerClients)) peer.on('error', () => undefined);
  return new RegionRebalancer({
    regions: { ...peerClients, [config.region]: client },
    bounds: { minShare, maxShare, maxStep },
    intervalMs,
    logger,
    ownedClients: Object.values(peerClients),
  });
}

/** pino, loaded only when the caller brings no logger: `import 'sluice'` does not pay for it (docs/library.md#weight). */
function defaultLogger(): Logger {
  const { pino } = createRequire(import.meta.url)('pino') as { pino: typeof Pino };
  return pino({ name: 'sluice' });
}

/** An ioredis client (standalone or Cluster) rather than a target: told apart without loading ioredis. */
function isClient(value: RedisTarget | RedisClient): value is RedisClient {
  return typeof (value as Partial<RedisClient>).sendCommand === 'function';
}
