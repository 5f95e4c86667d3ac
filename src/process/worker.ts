// One gateway worker (node:cluster): the gateway listener, its engine (a member
// of the fallback's divisor on its own) and its dashboard snapshot; no admin
// listener. Its config comes from the primary, at start and on each reload;
// its rules and keys from the primary's store (ipc-rule-store.ts).
import cluster from 'node:cluster';
import { createLogger } from '../config/logger.js';
import { AggregatorRegistry } from 'prom-client';
import { startSluice } from '../app.js';
import type { SluiceConfig } from '../config/types.js';
import { dashboardRegistry } from '../dashboard/metrics.js';
import { resilienceRegistry } from '../metrics/registry.js';
import { tracingRegistry } from '../metrics/trace-export.js';
import type { RulesLogger } from '../rules/logger.js';
import { RuleCache } from '../rules/cache/rule-cache.js';
import type { RulesRuntime } from '../rules/runtime.js';
import { acceptHandedConnections } from './hand-off.js';
import { IpcRuleStore } from './ipc-rule-store.js';
import { type FromWorker, isSluiceMessage, type StoreIdentity, type ToWorker } from './messages.js';
import { untilStopped } from './stop.js';
import { reportHealth } from './worker-health.js';

const send = (message: FromWorker) => process.send?.(message);

export async function runWorker(): Promise<number> {
  const { config, store: identity } = await firstConfig();
  const logger = createLogger({ ...config.log, base: { pid: process.pid, worker: cluster.worker?.id } });
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  // A hangup of the terminal reaches the whole group: the primary reloads, a worker must not die of it.
  process.on('SIGHUP', () => undefined);
  const store = new IpcRuleStore(identity.kind, identity.location);
  // The primary accepts on the gateway's address and hands connections over (hand-off.ts); this listener on a loopback port of its own only gives the server its bookkeeping.
  const app = await startSluice({ ...config, listen: { host: '127.0.0.1', port: 0 } }, { logger, openRules: () => rulesOver(store, config, logger) });
  acceptHandedConnections(app.gateway.server);
  // prom-client's aggregator in the primary asks every worker for these.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([resilienceRegistry, dashboardRegistry, tracingRegistry]);
  process.on('message', (message: unknown) => {
    if (!isSluiceMessage<ToWorker>(message) || message.sluice !== 'config') return;
    try {
      app.reconfigure(message.config);
      send({ sluice: 'configured', seq: message.seq });
    } catch (error) {
      send({ sluice: 'configured', seq: message.seq, error: error instanceof Error ? error.message : String(error) });
    }
  });
  send({ sluice: 'ready', url: app.url });
  reportHealth(() => app.engine.health(), (health) => send({ sluice: 'health', health }));
  const code = await untilStopped(logger, () => app.close(), (stop) => process.on('message', (message: unknown) => isSluiceMessage<ToWorker>(message) && message.sluice === 'drain' && stop()));
  // The IPC channel would keep the process alive: drained, it leaves.
  process.exit(code);
}

function firstConfig(): Promise<{ config: SluiceConfig; store: StoreIdentity }> {
  return new Promise((resolve) => {
    const onMessage = (message: unknown) => {
      if (isSluiceMessage<ToWorker>(message) && message.sluice === 'drain') process.exit(0); // the instance stops before this one served
      if (!isSluiceMessage<ToWorker>(message) || message.sluice !== 'config' || !message.store) return;
      process.off('message', onMessage);
      resolve({ config: message.config, store: message.store });
    };
    process.on('message', onMessage);
    // Asked for, not pushed: a message sent before this listener existed would be lost.
    send({ sluice: 'hello' });
  });
}

/** The worker's rule cache over the primary's store: same lookups, same change batches, no file or connection of its own. */
async function rulesOver(store: IpcRuleStore, config: SluiceConfig, logger: RulesLogger): Promise<RulesRuntime> {
  const cache = new RuleCache({ store, defaultRule: config.defaultRule, refreshIntervalMs: 30_000, logger });
  await cache.start();
  return {
    store,
    cache,
    async close() {
      await cache.close();
      await store.close();
    },
  };
}
