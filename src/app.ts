// The composition root: store → engine → rule and tenant resolvers → gateway.
// Each piece can be handed in through the options, which is where the
// PostgreSQL rule store, the resilience layer and the admin API plug in.
import type { Logger } from 'pino';
import { createLogger } from './config/logger.js';
import type { SluiceConfig } from './config/types.js';
import { startDemoUpstream } from './demo/upstream.js';
import { Gateway } from './gateway/gateway.js';
import { buildEngine } from './engine-factory/create-engine.js';
import { type Engine, StoreEngine } from './limiter/engine/engine.js';
import type { ConcurrencyLimiter } from './limiter/concurrency/concurrency-limiter.js';
import { concurrencyLimiterFor } from './engine-factory/concurrency-limiter-for.js';
import { type AdminServer, startAdminServer } from './admin/server.js';
import { resolversFor } from './rules/resolvers.js';
import { type RulesRuntime, type RulesRuntimeOptions, startRules } from './rules/runtime.js';
import type { ConfigReloader } from './admin/config-reload.js';
import type { RuleResolver, TenantResolver } from './rules/types.js';
import type { Store } from './stores/store.js';
import { redisTargetOf } from './config/redis-target.js';
import { watchForDashboard, withDashboard } from './dashboard/with-dashboard.js';
import type { UpstreamRow } from './dashboard/snapshot.js';
import type { Dashboard } from './dashboard/dashboard.js';
import { upstreamTallies } from './metrics/upstreams.js';
import { type DecisionService, decisionServiceWanted, startDecisionService } from './decision-service/service.js';
import type { ExplainContext } from './explain/explain.js';
import { loadTracing } from './tracing/load.js';
import { withTraceFields } from './tracing/log-fields.js';
import type { Env } from './tracing/settings.js';
import type { Tracing } from './tracing/types.js';
import { Notifier } from './notify/notifier.js';
import { RedisClaims } from './notify/redis-claim.js';

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
  /** Opens the rules runtime instead of the store the config names (a worker: the primary's store over IPC). */
  openRules?: (config: SluiceConfig) => Promise<RulesRuntime>;
  /** Config reload for the admin API (POST /reload) and the loaded config's hash on /readyz. */
  reloader?: Pick<ConfigReloader, 'reload' | 'status'>;
  /** Where the OTEL_* variables are read (docs/observability.md); default process.env. */
  env?: Env;
}

export interface RunningSluice {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  readonly adminUrl?: string;
  readonly demoUpstreamUrl?: string;
  /** The decision service's gRPC listener (`host:port`) and HTTP listener (URL), when configured. */
  readonly grpcAddress?: string;
  readonly decisionUrl?: string;
  readonly engine: Engine;
  readonly gateway: Gateway;
  /** Puts a reloaded config to use: routes, upstreams, limits, keys, header options (see docs/operations.md). */
  reconfigure(config: SluiceConfig): void;
  /** Stops accepting, lets in-flight requests finish, closes pools and the store. */
  close(): Promise<void>;
}

export async function startSluice(config: SluiceConfig, options: StartOptions = {}): Promise<RunningSluice> {
  const tracing = await loadTracing(config.tracing, options.env);
  const plainLogger = options.logger ?? createLogger(config.log);
  const logger = tracing ? withTraceFields(plainLogger, tracing) : plainLogger;
  const demo = options.demoUpstream ? await startDemoUpstream(options.demoUpstream === true ? {} : options.demoUpstream) : undefined;
  // Watched for the dashboard and /metrics; the gateway gets the same decisions.
  const { engine, dashboard, concurrency } = decidersFor(config, options, logger, tracing);
  let fronts: Fronts;
  try {
    fronts = await startFronts(config, options, { engine, dashboard, concurrency, tracing }, logger);
  } catch (error) {
    await Promise.allSettled([engine.close(), demo?.close(), dashboard.close()]);
    await tracing?.shutdown();
    throw error;
  }
  const { address, gateway, admin, runtime, decision } = fronts;
  const url = `${config.tls ? 'https' : 'http'}://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, store: config.store.type, routes: config.routes.length }, 'sluice gateway listening');
  dashboard.setProbes({ address: url, adminAddress: admin?.url, upstreams: upstreamRows, ruleSetVersion: runtime && (() => runtime.cache.status()) });

  let closing: Promise<void> | undefined;
  return {
    url,
    adminUrl: admin?.url,
    demoUpstreamUrl: demo?.url,
    grpcAddress: decision?.grpcAddress,
    decisionUrl: decision?.httpUrl,
    engine,
    gateway,
    reconfigure: (next) => reconfigure(next, fronts, { engine, options, logger, dashboard }),
    close: () => {
      closing ??= (async () => {
        // /readyz answers 503 for as long as the gateway drains; the admin API closes after it.
        decision?.drain();
        await Promise.allSettled([gateway.close(options.shutdownGraceMs), decision?.close(options.shutdownGraceMs ?? 10_000)]);
        await Promise.allSettled([admin?.close(), dashboard.close()]);
        await Promise.allSettled([engine.close(), demo?.close(), runtime?.close()]);
        await tracing?.shutdown(); // what is queued is exported, bounded by the export timeout
        logger.info('sluice gateway stopped');
      })();
      return closing;
    },
  };
}

/** The engine (watched for the dashboard and /metrics) and the concurrency limiter on the engine's own store. */
function decidersFor(config: SluiceConfig, options: StartOptions, logger: Logger, tracing: Tracing | undefined) {
  const deciding = options.engine ?? (options.store ? new StoreEngine(options.store) : engineFromConfig(config, logger, tracing));
  const concurrency = concurrencyLimiterFor(deciding, config.resilience.deadlineMs, config.store.maxKeys);
  const watched = withDashboard(deciding, config, logger);
  return { ...watched, engine: tracing ? tracing.engine(watched.engine) : watched.engine, concurrency };
}

/** A reloaded config reaches the gateway and the decision service with resolvers built from it. */
function reconfigure(next: SluiceConfig, { gateway, decision, runtime, explained }: Fronts, { engine, options, logger, dashboard }: { engine: Engine; options: StartOptions; logger: Logger; dashboard: Dashboard }): void {
  const resolvers = resolversFor(next, runtime?.cache);
  const rules = options.rules ?? resolvers.rules;
  const tenants = options.tenants ?? resolvers.tenants;
  const storedLists = runtime && (() => runtime.cache.lists());
  gateway.reconfigure({ config: next, rules, tenants, storedLists });
  explained.current = { config: next, rules, tenants, ruleStore: explained.current.ruleStore, verifiers: gateway.verifiers };
  decision?.reconfigure(next, { engine, rules, tenants, logger, storedLists });
  dashboard.noteChange('config-reload', `${next.routes.length} routes`);
}

interface Fronts {
  runtime: RulesRuntime | undefined;
  gateway: Gateway;
  address: { address: string; port: number };
  admin: AdminServer | undefined;
  decision: DecisionService | undefined;
  /** What GET /explain reads: the config and resolvers the gateway was last given. */
  explained: { current: ExplainContext };
}

/** The rule store's runtime, the gateway and the admin API, in that order; what started is closed again on failure. */
async function startFronts(config: SluiceConfig, options: StartOptions, deciding: { engine: Engine; dashboard: Dashboard; concurrency: ConcurrencyLimiter; tracing: Tracing | undefined }, logger: Logger): Promise<Fronts> {
  const { engine, dashboard, concurrency, tracing } = deciding;
  let runtime: RulesRuntime | undefined;
  try {
    if (options.openRules) runtime = await options.openRules(config);
    else if (options.ruleStore) runtime = await startRules(rulesOptions(config, logger));
    const resolvers = resolversFor(config, runtime?.cache);
    const explained: { current: ExplainContext } = { current: { config, rules: options.rules ?? resolvers.rules, tenants: options.tenants ?? resolvers.tenants, ruleStore: options.rules === undefined && runtime !== undefined } };
    // The rule store's allow and deny lists, beside the config file's (docs/lists.md).
    const cache = runtime?.cache;
    const storedLists = cache && (() => cache.lists());
    const gateway = new Gateway({ config, engine, concurrency, rules: explained.current.rules, tenants: explained.current.tenants, logger, observer: dashboard.history, usage: dashboard.usage, tracing, storedLists, notifier: notifierFor(config, logger) });
    // A sample's token is verified by the gateway's own verifiers (same keys, same JWKS cache), as the rules come from its cache.
    explained.current = { ...explained.current, verifiers: gateway.verifiers };
    const address = await gateway.listen(config.listen.host, config.listen.port);
    if (runtime) await watchForDashboard(runtime, dashboard);
    const decisionDeps = { engine, rules: options.rules ?? resolvers.rules, tenants: options.tenants ?? resolvers.tenants, logger, tracing, storedLists };
    const decision = decisionServiceWanted(config) ? await startDecisionService(config, decisionDeps).catch(async (error: unknown) => {
      await gateway.close(0);
      throw error;
    }) : undefined;
    let admin: AdminServer | undefined;
    if (options.admin && runtime) {
      // A draining gateway is not ready: load balancers stop sending before its sockets close.
      const reloader = options.reloader;
      const health = () => ({ ...(gateway.draining ? { ready: false, draining: true } : {}), ...(reloader ? { config: reloader.status() } : {}) });
      admin = await startAdminServer({ listen: config.admin.listen, tls: config.admin.tls, token: config.admin.token, metricsAccess: config.admin.metrics, store: runtime.store, cache: runtime.cache, engine, dashboard, logger, health, storeProbeTimeoutMs: config.database.healthTimeoutMs, reload: reloader?.reload.bind(reloader), explain: () => explained.current, usage: dashboard.usage.history, notifications: () => gateway.notifications() });
    }
    return { runtime, gateway, address, admin, decision, explained };
  } catch (error) {
    await runtime?.close();
    throw error;
  }
}

/** Notifications claimed cluster-wide on the store's Redis (one event per window across instances); the memory store's instance alone. */
function notifierFor(config: SluiceConfig, logger: Logger): Notifier {
  const redis = redisTargetOf(config.store);
  return new Notifier(config.notifications, { logger, claims: redis ? new RedisClaims(redis) : undefined });
}

/** The rule store the config names (PostgreSQL, or the embedded store in dataDir), seeded with the config's rules. */
export function rulesOptions(config: SluiceConfig, logger: Logger): RulesRuntimeOptions {
  const { url: databaseUrl, tls, password, ...timeouts } = config.database;
  return { databaseUrl, connection: { tls, password }, timeouts, dataDir: config.dataDir, seedRules: config.rules, defaultRule: config.defaultRule, logger };
}

/**
 * The engine the config asks for: memory unless a Redis URL or cluster is set,
 * then the resilient engine. Its options were validated with the config file,
 * so nothing here can refuse what `sluice check` accepted.
 */
export function engineFromConfig(config: SluiceConfig, logger: Logger, tracing?: Tracing): Engine {
  const { store } = config;
  return buildEngine(config.resilience, { redis: redisTargetOf(config.store), logger, ...(store.maxKeys ? { maxKeys: store.maxKeys } : {}), ...(tracing ? { wrapStore: (inner) => tracing.store(inner) } : {}) });
}

/** Each upstream instance's counts since start, for the dashboard's instance list. */
function upstreamRows(): UpstreamRow[] {
  return upstreamTallies().map(({ route, url, requests, errors, ejections, latencyMsSum, latencyCount }) => ({
    route,
    url,
    requests,
    errors,
    ejections,
    ...(latencyCount > 0 ? { meanMs: Math.round((latencyMsSum / latencyCount) * 10) / 10 } : {}),
  }));
}
