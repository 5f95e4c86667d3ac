// Memory under many clients: floods of requests each with an API key never
// seen before (bench/lib/fresh-keys-load.ts, in its own process), against the
// quick start config on Redis, and this process's RSS and heap after each
// flood, measured after a full garbage collection. State that grows per key
// shows as a heap that keeps rising flood after flood; a heap that levels off
// is warm-up (code compiled, pools and caches filled to their bounds).
//   npm run bench:memory -- [--floods 5] [--requests 100000] [--clients 64]
import { fork } from 'node:child_process';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { startSluice } from '../src/app.js';
import { loadConfig } from '../src/decision-service/load-config.js';
import { freePort } from '../test/helpers/ports.js';
import { benchRedis } from './lib/servers.js';

const { values } = parseArgs({
  options: { floods: { type: 'string', default: '5' }, requests: { type: 'string', default: '100000' }, clients: { type: 'string', default: '64' } },
});
const floods = Number(values.floods);
const requests = Number(values.requests);
const clients = Number(values.clients);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:memory)');

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
function measured(): { rssMb: number; heapUsedMb: number; externalMb: number } {
  for (let i = 0; i < 3; i++) gc!();
  const usage = process.memoryUsage();
  return { rssMb: mb(usage.rss), heapUsedMb: mb(usage.heapUsed), externalMb: mb(usage.external + usage.arrayBuffers) };
}

function flood(url: string): Promise<{ statuses: Record<string, number>; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    // A child of its own per flood: its pid names its keys, so every flood's keys are fresh.
    const child = fork(new URL('./lib/fresh-keys-load.ts', import.meta.url), [JSON.stringify({ url, requests, clients })], { execArgv: ['--import', 'tsx'] });
    child.once('message', resolve);
    child.once('exit', (code) => (code === 0 ? undefined : reject(new Error(`load exited with ${code}`))));
  });
}

const redis = await benchRedis();
const port = await freePort();
const config = loadConfig('examples/quickstart.yaml', { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}`, SLUICE_REDIS_URL: redis.url });
const app = await startSluice(config, { demoUpstream: { port }, logger: pino({ level: 'silent' }) });
try {
  const rows = [{ flood: 0, ...measured() }];
  console.log(JSON.stringify(rows[0]));
  for (let n = 1; n <= floods; n++) {
    const { statuses, elapsedMs } = await flood(app.url);
    rows.push({ flood: n, ...measured() });
    console.log(JSON.stringify({ ...rows.at(-1), statuses, elapsedMs: Math.round(elapsedMs) }));
  }
  const [first, last] = [rows[1]!, rows.at(-1)!];
  const perKey = (field: 'rssMb' | 'heapUsedMb') => Math.round(((last[field] - first[field]) * 1024 * 1024) / ((floods - 1) * requests));
  if (floods > 1) console.log(JSON.stringify({ requests, clients, floods, bytesPerFreshKeyAfterFirstFlood: { rss: perKey('rssMb'), heapUsed: perKey('heapUsedMb') } }));
} finally {
  await app.close();
  await redis.release();
}
