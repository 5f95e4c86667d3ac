// How the composition root plugs the dashboard in: the engine wrapped to be
// watched, and the dashboard publishing to the Redis the config names.
import type { Logger } from 'pino';
import type { SluiceConfig } from '../config/types.js';
import type { Engine } from '../limiter/engine.js';
import type { RedisTarget } from '../stores/redis/connect.js';
import { redisTargetOf as storeTargetOf } from '../config/redis-target.js';
import { Dashboard } from './dashboard.js';
import { ObservedEngine } from './observed-engine.js';

export function withDashboard(engine: Engine, config: SluiceConfig, logger: Logger): { engine: ObservedEngine; dashboard: Dashboard } {
  const observed = new ObservedEngine(engine);
  const redis = redisTargetOf(config);
  return { engine: observed, dashboard: new Dashboard({ engine: observed, ...(redis ? { redis } : {}), logger }) };
}

/** The Redis the config's store names; undefined with the memory store. */
export function redisTargetOf(config: SluiceConfig): RedisTarget | undefined {
  return storeTargetOf(config.store);
}
