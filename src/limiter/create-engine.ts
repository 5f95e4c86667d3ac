// Builds the engine the gateway decides with:
//   createEngine({})                                  → StoreEngine over a MemoryStore (one instance, no Redis)
//   createEngine({ redis: { url: 'redis://…' } })     → ResilientEngine (deadline, breaker, fallback, leasing…)
//   createEngine({ redis: existingIoredisClient })    → the same, over a client the caller keeps and closes
// Every other option is in resilienceConfigSchema, with its default.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Cluster, Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import { zodToSluiceError } from '../core/rule.js';
import type { Clock } from '../stores/clock.js';
import { MemoryStore } from '../stores/memory-store.js';
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import type { RedisClient } from '../stores/redis/scripts.js';
import { type Engine, StoreEngine } from './engine.js';
import { RegionRebalancer } from './region-rebalancer.js';
import { type ResilienceConfig, type ResilienceConfigInput, resilienceConfigSchema } from './resilience-config.js';
import { ResilientEngine } from './resilient-engine.js';

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
}

export type CreateEngineOptions = ResilienceConfigInput & EngineWiring;

/** The library's entry: validates the options (an error names the option, e.g. `memberTtlMs`), then builds. */
export function createEngine(options: CreateEngineOptions = {}): Engine {
  const { redis, logger, instanceId, maxKeys, now, ...rest } = options;
  const parsed = resilienceConfigSchema.safeParse(rest);
  if (!parsed.success) throw zodToSluiceError(parsed.error, '', 'ERR_CONFIG_INVALID');
  return buildEngine(parsed.data, { redis, logger, instanceId, maxKeys, now });
}

/** Builds the engine from options already validated (by createEngine, or with the config file). */
export function buildEngine(config: ResilienceConfig, wiring: EngineWiring): Engine {
  const { redis, logger: givenLogger, instanceId, maxKeys, now } = wiring;
  if (redis === undefined) return new StoreEngine(new MemoryStore({ ...(maxKeys ? { maxKeys } : {}), ...(now ? { now } : {}) }));

  const logger = givenLogger ?? pino({ name: 'sluice' });
  const ownsClient = !isClient(redis);
  const client = isClient(redis) ? redis : connectRedis(redis);
  if (ownsClient) client.on('error', (error: Error) => logger.debug({ err: error }, 'Redis connection error'));

  let rebalancer: RegionRebalancer | undefined;
  if (config.rebalance && config.region !== undefined) {
    const { peers, intervalMs, minShare, maxShare, maxStep } = config.rebalance;
    const peerClients = Object.fromEntries(Object.entries(peers).map(([name, target]) => [name, connectRedis(target)]));
    for (const peer of Object.values(peerClients)) peer.on('error', () => undefined);
    rebalancer = new RegionRebalancer({
      regions: { ...peerClients, [config.region]: client },
      bounds: { minShare, maxShare, maxStep },
      intervalMs,
      logger,
      ownedClients: Object.values(peerClients),
    });
  }

  return new ResilientEngine({
    client,
    ownsClient,
    deadlineMs: config.deadlineMs,
    connectGraceMs: config.connectGraceMs,
    breaker: config.breaker,
    instances: config.instances,
    instanceId: instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    heartbeatMs: config.heartbeatMs,
    memberTtlMs: config.memberTtlMs,
    region: config.region,
    defaultRegionShare: config.defaultRegionShare,
    hotKey: config.hotKey,
    negativeCacheSize: config.negativeCacheSize,
    stateCacheSize: config.stateCacheSize,
    fallbackMaxKeys: config.fallbackMaxKeys,
    adminTimeoutMs: config.adminTimeoutMs,
    logger,
    ...(rebalancer ? { rebalancer } : {}),
    ...(now ? { now } : {}),
  });
}

function isClient(value: RedisTarget | RedisClient): value is RedisClient {
  return value instanceof Redis || value instanceof Cluster;
}
