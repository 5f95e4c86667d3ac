// `sluice start` with workers > 1: this process (the primary) serves no
// gateway traffic. It forks the workers that share the gateway listener
// (node:cluster), and keeps what must be one per instance: the rule store (one
// writer) and its relay to the workers, the admin listener with /readyz,
// /metrics aggregated over the workers, the dashboard, and config reloads.
import cluster, { type Worker } from 'node:cluster';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { type AdminServer, startAdminServer } from '../admin/server.js';
import { rulesOptions } from '../app.js';
import type { Env } from '../config/env.js';
import type { SluiceConfig } from '../config/types.js';
import { redisTargetOf } from '../config/redis-target.js';
import { WorkersOverview } from '../dashboard/workers-overview.js';
import { StoreEngine } from '../limiter/engine/engine.js';
import { resolversFor } from '../rules/resolvers.js';
import { type RulesRuntime, startRules } from '../rules/runtime.js';
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import { RedisStore } from '../stores/redis-store.js';
import { ConfigReloader } from '../admin/config-reload.js';
import { ConnectionHandOff } from './hand-off.js';
import { RuleRelay } from './rule-relay.js';
import { untilStopped } from './stop.js';
import { WorkerPool } from './worker-pool.js';
import { WorkersHealth } from './worker-health.js';
import { type FromWorker, isSluiceMessage } from './messages.js';

export interface PrimaryOptions {
  config: SluiceConfig;
  file: string;
  env: Env;
  logger: Logger;
}

export async function runPrimary({ config, file, env, logger }: PrimaryOptions): Promise<number> {
  cluster.setupPrimary({ serialization: 'advanced' });
  const runtime = await startRules(rulesOptions(config, logger));
  const relay = new RuleRelay(runtime.store, () => pool.workers);
  const health = new WorkersHealth();
  const onMessage = (worker: Worker, message: unknown) => {
    if (isSluiceMessage<FromWorker>(message) && message.sluice === 'health') health.note(worker.process.pid!, message.health);
    else relay.handle(worker, message);
  };
  const pool = new WorkerPool({ count: config.workers, config, store: { kind: runtime.store.kind, location: runtime.store.location }, logger, onMessage });
  const reloader = new ConfigReloader({ file, env, config, logger, apply: (next) => pool.reconfigure(next) });
  process.on('SIGHUP', () => void reloader.reload());
  await relay.start();
  const handOff = new ConnectionHandOff(() => pool.workers);
  try {
    await pool.start();
    await handOff.listen(config.listen.host, config.listen.port);
  } catch (error) {
    await pool.stop();
    await runtime.close();
    throw error;
  }
  const { admin, close } = await startPrimaryAdmin(config, logger, { runtime, pool, reloader, health });
  logger.info({ listen: `${config.listen.host}:${config.listen.port}`, admin: admin.url, workers: config.workers }, 'sluice workers serving');
  process.on('SIGUSR2', () => {
    logger.info({ workers: pool.workers.length }, 'replacing the workers one at a time');
    pool.roll().then(() => logger.info('workers replaced'), (error: unknown) => logger.error({ err: error }, 'replacing the workers failed'));
  });
  return untilStopped(logger, async () => {
    // New connections are refused from now on, as by one process's closed listener; /readyz answers 503
    // while the workers drain what was accepted (their pool is stopping); the admin API closes after them.
    await handOff.close();
    await pool.stop();
    relay.stop();
    await close();
    logger.info('sluice stopped');
  });
}

interface PrimaryParts {
  runtime: RulesRuntime;
  pool: WorkerPool;
  reloader: ConfigReloader;
  health: WorkersHealth;
}

/** The admin listener of the instance: the primary's store and cache, the workers' metrics and dashboard snapshots. */
async function startPrimaryAdmin(config: SluiceConfig, logger: Logger, { runtime, pool, reloader, health: workersHealth }: PrimaryParts): Promise<{ admin: AdminServer; close: () => Promise<void> }> {
  // Workers > 1 needs Redis: the config refuses the memory store.
  const redis = redisTargetOf(config.store) as RedisTarget;
  // Bucket inspection and reset from the admin API; a plain store engine, so the primary is no member of the fallback's divisor.
  const engine = new StoreEngine(new RedisStore(connectRedis(redis)));
  const dashboard = new WorkersOverview(redis, (id) => pool.workers.some((worker) => id.startsWith(`${hostname()}-${worker.process.pid}-`)), logger);
  const aggregator = new AggregatorRegistry();
  const health = () => ({
    ...(pool.stopping ? { ready: false, draining: true } : pool.workers.length === 0 ? { ready: false } : {}),
    config: reloader.status(),
    workers: { wanted: config.workers, serving: pool.workers.map((worker) => worker.process.pid) },
  });
  const admin = await startAdminServer({
    ...{ listen: config.admin.listen, tls: config.admin.tls, token: config.admin.token, metricsAccess: config.admin.metrics, store: runtime.store, cache: runtime.cache, engine, dashboard, logger, health },
    ...{ storeProbeTimeoutMs: config.database.healthTimeoutMs, reload: () => reloader.reload(), metrics: () => aggregator.clusterMetrics() },
    engineHealth: () => workersHealth.combined(pool.workers.map((worker) => worker.process.pid!)),
    // The workers read the primary's rule cache over IPC: the same view, with the config last reloaded.
    explain: () => ({ config: reloader.config, ...resolversFor(reloader.config, runtime.cache), ruleStore: true }),
    usage: dashboard.usage,
  });
  const close = async () => {
    await Promise.allSettled([admin.close(), dashboard.close()]);
    await Promise.allSettled([engine.close(), runtime.close()]);
  };
  return { admin, close };
}
