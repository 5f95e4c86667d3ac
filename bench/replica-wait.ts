// npm run bench:wait [-- --quick]
// What opt-in WAIT (store.wait) costs: one engine on a master with one
// healthy replica (real redis-servers on loopback), decisions on a token
// bucket that always admits, closed loop at 1 and 16 callers, WAIT off and
// on (1 replica, 5 ms timeout, deadline 50 ms) alternating, each 3 rounds;
// medians of decisions/s, p50 and p99 latency, and CPU per decision in this
// process and in the master (INFO cpu).
import { loadavg } from 'node:os';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { parseRule } from '../src/policies/rule.js';
import { createEngine } from '../src/engine-factory/create-engine.js';
import { startRedis } from '../test/helpers/redis-server.js';
import { isMain, runMain } from './lib/cleanup.js';
import { runClosedLoop } from './lib/closed-loop.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';

const rule = parseRule({ policy: 'token_bucket', capacity: 1e9, refillPerSecond: 1e9 });

interface Round {
  opsPerSec: number;
  p50Us: number;
  p99Us: number;
  nodeCpuUs: number;
  redisCpuUs: number;
}

async function redisCpuUs(client: Redis): Promise<number> {
  const info = await client.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

async function oneRound(url: string, wait: boolean, concurrency: number, durationMs: number, info: Redis): Promise<Round> {
  const engine = createEngine({ redis: { url }, instances: 1, deadlineMs: 50, logger: pino({ level: 'silent' }), hotKey: { autoLeaseRatePerSec: 0 }, ...(wait ? { replicaWait: { replicas: 1, timeoutMs: 5 } } : {}) });
  try {
    await runClosedLoop(concurrency, 300, () => engine.decide({ tag: 'wait-bench', name: 'r' }, rule)); // warm-up
    const [cpu0, redis0] = [process.cpuUsage(), await redisCpuUs(info)];
    const result = await runClosedLoop(concurrency, durationMs, (seq) => engine.decide({ tag: 'wait-bench', name: `r${seq % 64}` }, rule));
    const cpu = process.cpuUsage(cpu0);
    const redisCpu = (await redisCpuUs(info)) - redis0;
    return { opsPerSec: result.opsPerSec, p50Us: result.latency.p50Us, p99Us: result.latency.p99Us, nodeCpuUs: (cpu.user + cpu.system) / result.ops, redisCpuUs: redisCpu / result.ops };
  } finally {
    await engine.close();
  }
}

export async function runWaitBench(options: BenchOptions): Promise<string[][]> {
  const master = await startRedis();
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
  const info = master.client();
  try {
    const rows: string[][] = [];
    for (const concurrency of [1, 16]) {
      const rounds: Record<'off' | 'on', Round[]> = { off: [], on: [] };
      for (let i = 0; i < 3; i++) {
        for (const mode of ['off', 'on'] as const) rounds[mode].push(await oneRound(master.url, mode === 'on', concurrency, pick(options, 1500, 5000), info));
      }
      for (const mode of ['off', 'on'] as const) {
        const m = (pick: (r: Round) => number) => median(rounds[mode].map(pick));
        rows.push([String(concurrency), mode, String(round(m((r) => r.opsPerSec))), String(round(m((r) => r.p50Us))), String(round(m((r) => r.p99Us))), String(round(m((r) => r.nodeCpuUs), 1)), String(round(m((r) => r.redisCpuUs), 1))]);
      }
    }
    return rows;
  } finally {
    info.disconnect();
    await Promise.all([replica.stop(), master.stop()]);
  }
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const rows = await runWaitBench(parseOptions());
    console.log(`store.wait cost (1 replica, timeout 5 ms), load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    console.log(textTable(['callers', 'WAIT', 'decisions/s', 'p50 µs', 'p99 µs', 'node CPU µs/decision', 'redis CPU µs/decision'], rows));
  });
}
