// Series of the process layout, served by the admin listener's /metrics beside
// the gateway's: config reloads, the loaded config, and (with workers) the
// worker count and restarts. Always from the one process that owns the admin
// listener, so they are never summed over workers.
import { Counter, Gauge, Registry } from 'prom-client';

export const processRegistry = new Registry();

export const configReloads = new Counter({
  name: 'sluice_config_reloads_total',
  help: 'Config reloads (SIGHUP, sluice reload, POST /reload) by outcome: applied, or invalid (the old config kept serving)',
  labelNames: ['outcome'] as const,
  registers: [processRegistry],
});
for (const outcome of ['applied', 'invalid'] as const) configReloads.labels(outcome);

const configLoaded = new Gauge({
  name: 'sluice_config_loaded_timestamp_seconds',
  help: 'When the config in use was loaded (start or the last applied reload), Unix seconds',
  registers: [processRegistry],
});

const configInfo = new Gauge({
  name: 'sluice_config_info',
  help: 'Always 1; its hash label is the first 12 hex digits of the SHA-256 of the config file in use',
  labelNames: ['hash'] as const,
  registers: [processRegistry],
});

export const workerRestarts = new Counter({
  name: 'sluice_worker_restarts_total',
  help: 'Gateway workers that exited unasked and were replaced',
  registers: [processRegistry],
});

export const liveWorkers = new Gauge({
  name: 'sluice_workers',
  help: 'Gateway worker processes serving now (1 without workers)',
  registers: [processRegistry],
});
liveWorkers.set(1);

export function noteConfigLoaded(hash: string, loadedAt: number): void {
  configInfo.reset();
  configInfo.labels(hash).set(1);
  configLoaded.set(loadedAt / 1000);
}
