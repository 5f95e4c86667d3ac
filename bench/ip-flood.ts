// npx tsx bench/ip-flood.ts [--quick]
// Memory under a flood of random client addresses (IPv4 and IPv6 /128s, one
// new address per request, through a trusted proxy at 127.0.0.1) on an
// anonymous route limited per IP: two floods of 100,000 (10,000 with --quick)
// on the memory store and on Redis. Reports the gateway's heap after a GC
// (bounded: the second flood adds little), the memory store's bucket count
// against maxKeys, and Redis's key count, keys without a TTL and keys left
// once the longest TTL has passed. Gateway and flood share this process, so
// the heap figures include the flood's client (small and constant).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { type RunningSluice, startSluice } from '../src/app.js';
import { parseConfig } from '../src/decision-service/load-config.js';
import { MemoryStore } from '../src/stores/memory-store.js';
import { floodConfig, ipFlood } from './lib/ip-flood.js';
import { isMain, runMain } from './lib/cleanup.js';
import { parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';
import { startDemoUpstream } from '../src/demo/upstream.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const heapMb = (): number => {
  gc();
  gc();
  return Math.round((process.memoryUsage().heapUsed / 1024 / 1024) * 10) / 10;
};

interface Row {
  store: string;
  requests: number;
  heapBeforeMb: number;
  heapAfterFirstMb: number;
  heapAfterSecondMb: number;
  buckets: string;
  statuses: string;
}

async function flood(sluice: RunningSluice, count: number): Promise<string> {
  const result = await ipFlood(`${sluice.url}/login`, count, 64);
  return `${JSON.stringify(result.statuses)}${result.errors ? ` errors ${result.errors}` : ''}`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const count = pick(options, 10_000, 100_000);
  const upstream = await startDemoUpstream({ port: 0 });
  const redis = await benchRedis();
  const logger = pino({ level: 'silent' });
  const rows: Row[] = [];
  const notes: string[] = [];
  try {
    const start = (store: string, extra = {}) =>
      startSluice(parseConfig(floodConfig(upstream.url, store), { env: { SLUICE_LISTEN: '127.0.0.1:0' } }), { logger, ...extra });

    const memory = new MemoryStore(); // maxKeys: the default, 100,000
    let sluice = await start('', { store: memory });
    const before = heapMb();
    const firstStatuses = await flood(sluice, count);
    const afterFirst = heapMb();
    const peak = memory.size;
    await flood(sluice, count);
    rows.push({ store: 'memory', requests: count * 2, heapBeforeMb: before, heapAfterFirstMb: afterFirst, heapAfterSecondMb: heapMb(), buckets: `${peak} then ${memory.size} (maxKeys ${memory.maxKeys})`, statuses: firstStatuses });
    await sluice.close();

    sluice = await start(`store: { type: redis, url: ${redis.url} }`);
    const client = redis.client();
    const redisBefore = heapMb();
    const redisStatuses = await flood(sluice, count);
    const redisFirst = heapMb();
    await flood(sluice, count);
    const keys = await client.keys('rl:*');
    const ttls = await Promise.all(keys.map((key) => client.pttl(key)));
    const noTtl = ttls.filter((ttl) => ttl === -1).length; // -2: expired since KEYS
    const longest = Math.max(0, ...ttls);
    rows.push({ store: 'redis', requests: count * 2, heapBeforeMb: redisBefore, heapAfterFirstMb: redisFirst, heapAfterSecondMb: heapMb(), buckets: `${keys.length} keys right after, ${noTtl} without TTL`, statuses: redisStatuses });
    const stats = sluice.engine.counters();
    notes.push(`Redis engine: decisions by source ${JSON.stringify(stats.bySource)}, ${stats.deadlineTimeouts} past the deadline.`);
    await sleep(longest + 500);
    notes.push(`Redis: longest TTL ${longest} ms; ${(await client.keys('rl:*')).length} bucket keys left after it passed.`);
    client.disconnect();
    await sluice.close();
  } finally {
    await upstream.close();
    await redis.release();
  }
  const header = ['store', 'requests', 'heap before MB', 'heap after 1st flood MB', 'heap after 2nd flood MB', 'buckets', 'statuses (1st flood)'];
  console.log(textTable(header, rows.map((r) => [r.store, r.requests, r.heapBeforeMb, r.heapAfterFirstMb, r.heapAfterSecondMb, r.buckets, r.statuses])));
  for (const note of notes) console.log(note);
}

if (isMain(import.meta.url)) void runMain(main);
