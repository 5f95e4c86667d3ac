// The fresh-key flood: 100,000 requests, each with an API key never seen
// before, from 64 concurrent clients, against the quick start config on Redis.
// Every key has its full budget, so every 429 is a false refusal; and Redis is
// busy, not down, so the breaker must stay closed. Prints the status counts,
// the engine's deadline misses and late-reply reconciliations, and the breaker
// transitions.   npx tsx bench/fresh-keys.ts [--requests 100000] [--clients 64]
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { startSluice } from '../src/app.js';
import { loadConfig } from '../src/decision-service/load-config.js';
import { resilienceRegistry } from '../src/metrics/registry.js';
import { freePort } from '../test/helpers/ports.js';
import { benchRedis } from './lib/servers.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '100000' }, clients: { type: 'string', default: '64' } } });
const requests = Number(values.requests);
const clients = Number(values.clients);

const redis = await benchRedis();
const port = await freePort();
const config = loadConfig('examples/quickstart.yaml', { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}`, SLUICE_REDIS_URL: redis.url });
const app = await startSluice(config, { demoUpstream: { port }, logger: pino({ level: 'silent' }) });
try {
  const result = await new Promise<{ statuses: Record<string, number>; refusals: string[]; elapsedMs: number }>((resolve, reject) => {
    const child = fork(new URL('./lib/fresh-keys-load.ts', import.meta.url), [JSON.stringify({ url: app.url, requests, clients })], {
      execArgv: ['--import', 'tsx'],
    });
    child.once('message', resolve);
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load exited with ${code}`))));
  });
  const engine = app.engine;
  const metrics = (await resilienceRegistry.getMetricsAsJSON())
    .filter((m) => ['sluice_store_failures_total', 'sluice_breaker_transitions_total', 'sluice_late_replies_total'].includes(m.name))
    .map((m) => ({ name: m.name, values: m.values.map((v) => `${JSON.stringify(v.labels)}=${v.value}`) }));
  console.log(JSON.stringify({ requests, clients, ...result, stats: engine.counters(), metrics }, null, 2));
} finally {
  await app.close();
  await redis.release();
}
