// The composition root: store → engine → rule and tenant resolvers → gateway.
// Each piece can be handed in through the options, which is where the
// PostgreSQL rule store, the resilience layer and the admin API plug in.
import { type Logger, pino } from 'pino';
import type { SluiceConfig } from './config/types.js';
import { type DemoUpstream, startDemoUpstream } from './demo/upstream.js';
import { Gateway } from './gateway/gateway.js';
import { StaticRuleResolver } from './gateway/static-rules.js';
import { StaticTenantResolver } from './gateway/static-tenants.js';
import { createEngine } from './limiter/create-engine.js';
import { type Engine, StoreEngine } from './limiter/engine.js';
import { type AdminServer, startAdminServer } from './admin/server.js';
import { ChainedTenantResolver } from './gateway/tenant-chain.js';
import { type RulesRuntime, startRules } from './rules/runtime.js';
import type { RuleResolver, TenantResolver } from './rules/types.js';
import type { Store } from './stores/store.js';
import { withDashboard } from './dashboard/wire.js';

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
  /**
   * Rules and keys from the rule store (PostgreSQL when `database.url` is set,
   * else the embedded store in `dataDir`), kept current at runtime. Without it
   * the config file's rules and keys are used as they are.
   */
  ruleStore?: boolean;
  /** Serve the admin API on `admin.listen` (needs `ruleStore`). */
  admin?: boolean;
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

  let runtime: RulesRuntime | undefined;
  let admin: AdminServer | undefined;
  // Watched for the dashboard and /metrics; the gateway gets the same decisions.
  const { engine, dashboard } = withDashboard(options.engine ?? (options.store ? new StoreEngine(options.store) : engineFromConfig(config, logger)), config, logger);
  const configuredTenants = new StaticTenantResolver(config.tenants);
  let address: { address: string; port: number };
  let gateway: Gateway;
  try {
    if (options.ruleStore) {
      runtime = await startRules({ databaseUrl: config.database.url, dataDir: config.dataDir, seedRules: config.rules, defaultRule: config.defaultRule, logger });
    }
    gateway = new Gateway({
      config,
      engine,
      rules: options.rules ?? runtime?.cache ?? new StaticRuleResolver(config.rules, config.defaultRule),
      tenants: options.tenants ?? (runtime ? new ChainedTenantResolver(runtime.cache, configuredTenants) : configuredTenants),
      logger,
    });
    address = await gateway.listen(config.listen.host, config.listen.port);
    if (options.admin && runtime) {
      admin = await startAdminServer({ listen: config.admin.listen, token: config.admin.token, store: runtime.store, cache: runtime.cache, engine, dashboard, logger });
    }
  } catch (error) {
    await Promise.allSettled([engine.close(), demo?.close(), runtime?.close(), dashboard.close()]);
    throw error;
  }
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, store: config.store.type, routes: config.routes.length }, 'sluice gateway listening');

  let closing: Promise<void> | undefined;
  return {
    url,
    adminUrl: admin?.url,
    demoUpstreamUrl: demo?.url,
    engine,
    gateway,
    close: () => {
      closing ??= (async () => {
        await Promise.allSettled([gateway.close(options.shutdownGraceMs), admin?.close(), dashboard.close()]);
        await Promise.allSettled([engine.close(), demo?.close(), runtime?.close()]);
        logger.info('sluice gateway stopped');
      })();
      return closing;
    },
  };
}

/** The engine the config asks for: memory unless a Redis URL or cluster is set, then the resilient engine. */
export function engineFromConfig(config: SluiceConfig, logger: Logger): Engine {
  const { store } = config;
  const redis = store.type === 'redis' ? (store.cluster ? { cluster: store.cluster.map(({ host, port }) => `${host}:${port}`) } : { url: store.url! }) : undefined;
  return createEngine({
    ...config.resilience,
    ...(redis ? { redis } : {}),
    ...(store.maxKeys ? { maxKeys: store.maxKeys } : {}),
    ...(store.deadlineMs !== undefined ? { deadlineMs: store.deadlineMs } : {}),
    ...(config.instances !== undefined ? { instances: config.instances } : {}),
    ...(config.region !== undefined ? { region: config.region } : {}),
    logger,
  });
}
