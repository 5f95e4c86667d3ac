// npm run bench:concurrency [-- --quick]
// What a `kind: concurrency` limit adds to a request on Redis: two gateways in
// this process on one redis-server, the same route with a never-refusing rate
// limit, one of them also with a concurrency limit that never refuses (max
// 1,000 per tenant, 64 connections). Saturated with autocannon in turns
// (A, B, A, B…), medians compared side by side. CPU is this whole process's
// (load generator, upstream and both gateways), so only the difference between
// the two rows is the gateway's.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { startSluice } from '../src/app.js';
import { parseConfig } from '../src/decision-service/load-config.js';
import { isMain, onCleanup, runMain } from './lib/cleanup.js';
import { saturate, TENANTS } from './lib/http-load.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { resetStats, scriptCalls } from './lib/redis-info.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

const RATE = '{ id: orders-rate, key: tenant, rule: { policy: token_bucket, capacity: 1000000000, refillPerSecond: 1000000000 } }';
const CONCURRENCY = '{ id: orders-open, kind: concurrency, key: tenant, max: 1000 }';

function yaml(upstream: string, redis: string, limits: string[]): string {
  const keys = TENANTS.map((key, i) => `{ key: ${key}, tenant: t${i} }`).join(', ');
  return `routes: [{ id: orders, path: /orders, upstream: '${upstream}', limits: [${limits.join(', ')}] }]\ntenants: { keys: [${keys}] }\nstore: { type: redis, url: '${redis}' }\n`;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function benchConcurrency(options: BenchOptions): Promise<string> {
  const redis = await benchRedis();
  const upstream = createServer((_req, res) => res.end('{}'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
  onCleanup(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const rows = [
    { name: 'rate limit only', limits: [RATE] },
    { name: 'rate + concurrency limit', limits: [CONCURRENCY, RATE] },
  ];
  const gateways = await Promise.all(
    rows.map((row) => startSluice(parseConfig(yaml(upstreamUrl, redis.url, row.limits), { source: 'bench.yaml', env: { SLUICE_LISTEN: '127.0.0.1:0' } }), { logger: pino({ level: 'silent' }) })),
  );
  for (const gateway of gateways) onCleanup(() => gateway.close());
  const durationMs = pick(options, 2_000, 5_000);
  const rounds = pick(options, 2, 3);
  const samples = rows.map(() => ({ rps: [] as number[], cpu: [] as number[], p99: [] as number[], calls: [] as number[], usec: [] as number[] }));
  const stats = redis.client();
  onCleanup(async () => stats.disconnect());
  for (let round = 0; round < rounds; round++) {
    for (const [i, gateway] of gateways.entries()) {
      await resetStats(stats);
      const cpu = process.cpuUsage();
      const load = await saturate(`${gateway.url}`, durationMs);
      const used = process.cpuUsage(cpu);
      // Redis's own count: membership heartbeats add a few calls per run, nothing per request.
      const scripts = await scriptCalls(stats);
      samples[i]!.calls.push(scripts.calls / load.completed);
      samples[i]!.usec.push(scripts.usec / load.completed);
      if (load.non2xx > 0 || load.errors > 0) throw new Error(`${rows[i]!.name}: ${load.non2xx} non-2xx, ${load.errors} errors`);
      samples[i]!.rps.push(load.requestsPerSec);
      samples[i]!.cpu.push((used.user + used.system) / load.completed);
      samples[i]!.p99.push(load.p99Ms);
    }
  }
  const base = median(samples[0]!.rps);
  const table = rows.map((row, i) => {
    const m = (values: number[], digits: number) => median(values).toFixed(digits);
    const s = samples[i]!;
    return [row.name, String(median(s.rps)), (median(s.rps) / base).toFixed(2), m(s.cpu, 0), String(median(s.p99)), m(s.calls, 2), m(s.usec, 1)];
  });
  return textTable(['route limits (Redis)', 'req/s (median)', 'ratio', 'process CPU µs/request', 'p99 ms', 'Redis scripts/request', 'Redis µs/request'], table);
}

if (isMain(import.meta.url)) runMain(async () => {
    process.stdout.write(`${await benchConcurrency(parseOptions())}\n`);
  });
