// How the composition root plugs the dashboard in: the engine watched (its
// observer step added to its chain), and the dashboard publishing to the
// Redis the config names.
import type { Logger } from 'pino';
import type { SluiceConfig } from '../config/types.js';
import type { Engine } from '../limiter/engine/engine.js';
import { redisTargetOf } from '../config/redis-target.js';
import type { RulesRuntime } from '../rules/runtime.js';
import type { StoreChange } from '../rules/store.js';
import { Dashboard } from './dashboard.js';
import type { EventKind } from './history-store.js';
import { EngineObserver } from './engine-observer.js';

export function withDashboard(engine: Engine, config: SluiceConfig, logger: Logger): { engine: Engine; dashboard: Dashboard } {
  const observer = new EngineObserver(engine);
  if (!observer.observing) logger.warn('the engine given has no decision chain (Engine.use): the dashboard will not count its decisions');
  const redis = redisTargetOf(config.store);
  return { engine, dashboard: new Dashboard({ observer, ...(redis ? { redis } : {}), logger }) };
}

const CHANGE_EVENTS: Record<Exclude<StoreChange['kind'], 'disconnected' | 'version'>, EventKind> = { rule: 'rule-change', override: 'override-change', key: 'key-change', reload: 'rule-change', plan: 'rule-change', assignment: 'rule-change', list: 'rule-change' };

/** Rule-store changes (this instance's and, on PostgreSQL, every instance's) become events on the charts. */
export async function watchForDashboard(runtime: Pick<RulesRuntime, 'store'>, dashboard: Dashboard): Promise<void> {
  await runtime.store.watch((change) => {
    if (change.kind === 'disconnected' || change.kind === 'version') return; // a version follows the change it counts
    dashboard.noteChange(CHANGE_EVENTS[change.kind], describe(change));
  });
}

function describe(change: Exclude<StoreChange, { kind: 'disconnected' | 'version' }>): string {
  if (change.kind === 'rule') return `rule ${change.tenant}/${change.route}`;
  if (change.kind === 'override') return `override on ${change.limitId}`;
  if (change.kind === 'key') return `key ${change.id}`;
  if (change.kind === 'plan') return `plan ${change.plan}`;
  if (change.kind === 'list') return `list entry ${change.id}`;
  if (change.kind === 'assignment') return `${change.subject} ${change.id} moved plan`;
  return 'rules reloaded';
}
