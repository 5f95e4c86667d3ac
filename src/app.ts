// The composition root: store → engine → rule and tenant resolvers → gateway.
// Each piece can be handed in through the options, which is where the
// PostgreSQL rule store, the resilience layer and the admin API plug in.
import { Cluster, Redis } from 'ioredis';
import { type Logger, pino } from 'pino';
import type { SluiceConfig, StoreConfig } from './config/types.js';
import { type DemoUpstream, startDemoUpstream } from './demo/upstream.js';
import { Gateway } from './gateway/gateway.js';
import { StaticRuleResolver } from './gateway/static-rules.js';
import { StaticTenantResolver } from './gateway/static-tenants.js';
import { type Engine, StoreEngine } from './limiter/engine.js';
import type { RuleResolver, TenantResolver } from './rules/types.js';
import { MemoryStore } from './stores/memory-store.js';
import { RedisStore } from './stores/redis-store.js';
import type { Store } from './stores/store.js';

export interface StartOptions {
  /** Also serve the demo upstream (127.0.0.1:8090 unless a port is given). */
  demoUpstream?: boolean | { host?: string; port?: number };
  logger?: Logger;
  /** Replace the store built from `config.store`. */
  store?: Store;
  /** Replace the engine (e.g. the resilient one); its store is then the engine's business. */
  engine?: Engine;
  rules?: RuleResolver;
  tenants?: TenantResolver;
  /** How long shutdown waits for in-flight requests (default 10 s). */
  shutdownGraceMs?: number;
}

export interface RunningSluice {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  readonly adminUrl?: string;
  readonly demoUpstreamUrl?: string;
  readonly engine: Engine;
  readonly gateway: Gateway;
  /** Stops accepting, lets in-flight requests finish, closes pools and the store. */
  close(): Promise<void>;
}

export async function startSluice(config: SluiceConfig, options: StartOptions = {}): Promise<RunningSluice> {
  const logger = options.logger ?? pino({ level: config.log.level, name: 'sluice' });
  let demo: DemoUpstream | undefined;
  if (options.demoUpstream) demo = await startDemoUpstream(options.demoUpstream === true ? {} : options.demoUpstream);

  const engine = options.engine ?? new StoreEngine(options.store ?? createStore(config.store, logger));
  const gateway = new Gateway({
    config,
    engine,
    rules: options.rules ?? new StaticRuleResolver(config.rules, config.defaultRule),
    tenants: options.tenants ?? new StaticTenantResolver(config.tenants),
    logger,
  });
  let address: { address: string; port: number };
  try {
    address = await gateway.listen(config.listen.host, config.listen.port);
  } catch (error) {
    await Promise.allSettled([engine.close(), demo?.close()]);
    throw error;
  }
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, store: config.store.type, routes: config.routes.length }, 'sluice gateway listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    demoUpstreamUrl: demo?.url,
    engine,
    gateway,
    close: () => {
      closing ??= (async () => {
        await gateway.close(options.shutdownGraceMs);
        await Promise.allSettled([engine.close(), demo?.close()]);
        logger.info('sluice gateway stopped');
      })();
      return closing;
    },
  };
}

/** The store the config asks for; memory unless a Redis URL or cluster is set. */
export function createStore(store: StoreConfig, logger: Logger): Store {
  if (store.type === 'memory') return new MemoryStore({ maxKeys: store.maxKeys });
  const client = store.cluster
    ? new Cluster(store.cluster.map(({ host, port }) => ({ host, port })), { redisOptions: { maxRetriesPerRequest: 1 } })
    : new Redis(store.url!, { maxRetriesPerRequest: 1 });
  // ioredis reports connection trouble as 'error' events: log them, never crash on them.
  client.on('error', (error: Error) => logger.warn({ err: error.message }, 'redis connection error'));
  return new RedisStore(client);
}
