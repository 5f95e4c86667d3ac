// npm run bench:workers [-- --quick]
// `sluice start` on Redis with 1 and with 2 workers, as an operator runs it:
// requests/s at saturation and at an even 2,500 req/s, and CPU µs per request
// of the whole instance (primary and workers, from /proc). Runs alternate
// (1 2 1 2 …); medians with ranges.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../test/helpers/ports.js';
import { type Figure, PACED_RATE } from './gateway.js';
import { ensureBuilt } from './lib/built.js';
import { cpuMicrosOf, forkServer } from './lib/children.js';
import { isMain, onCleanup, runMain } from './lib/cleanup.js';
import { type LoadResult, paced, saturate } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

export interface WorkersRow {
  workers: number;
  mode: 'saturation' | 'paced';
  requestsPerSec: Figure;
  p99Ms: Figure;
  /** CPU of the primary and every worker per completed request. */
  cpuUsPerRequest: Figure;
  errors: number;
}

export interface WorkersResult {
  rows: WorkersRow[];
  repeats: number;
  notes: string[];
}

interface Instance {
  workers: number;
  url: string;
  cpuMicros(): number;
  stop(): Promise<void>;
}

const figure = (values: number[]): Figure => ({ median: round(median(values), 3), min: round(Math.min(...values), 3), max: round(Math.max(...values), 3) });

/** The process and its children (the workers), from /proc. */
function treeCpuMicros(pid: number): number {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // gone
  }
  return cpuMicrosOf(pid) + children.reduce((sum, child) => sum + treeCpuMicros(child), 0);
}

async function startInstance(workers: number, upstream: string, redisUrl: string, dir: string): Promise<Instance> {
  const port = await freePort();
  const file = join(dir, `sluice-${workers}.yaml`);
  writeFileSync(
    file,
    `listen: 127.0.0.1:${port}
admin: { listen: '127.0.0.1:${await freePort()}' }
dataDir: ${join(dir, `data-${workers}`)}
workers: ${workers}
log: { level: warn }
store: { url: '${redisUrl}' }
routes: [{ id: orders, path: /orders, upstream: '${upstream}' }]
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 1000000000, refillPerSecond: 1000000000 }
`,
  );
  ensureBuilt(); // `sluice start` as installed: the built CLI
  const child: ChildProcess = spawn(process.execPath, ['dist/cli/main.js', 'start', '--config', file], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = onCleanup(async () => {
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(late);
  });
  for (let waited = 0; waited < 60_000; waited += 200) {
    if (child.exitCode !== null) break;
    if ((await fetch(`${url}/orders`, { headers: { 'x-api-key': 'bench-tenant-0' } }).catch(() => undefined))?.status === 200) {
      // Every worker listening: the primary logs it; a few more answers make sure.
      await sleep(2000);
      return { workers, url, cpuMicros: () => treeCpuMicros(child.pid!), stop };
    }
    await sleep(200);
  }
  await stop();
  throw new Error(`sluice with ${workers} worker(s) did not serve`);
}

export async function runWorkersBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<WorkersResult> {
  const repeats = pick(options, 1, 3);
  const durationMs = pick(options, 400, 5000);
  const redis = await benchRedis();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-workers-'));
  const upstream = await forkServer('upstream', 'upstream.ts', {});
  const instances: Instance[] = [];
  try {
    progress('workers: starting sluice with 1 and 2 workers');
    for (const workers of [1, 2]) instances.push(await startInstance(workers, upstream.url, redis.url, dir));
    const samples = new Map<string, { result: LoadResult; cpuUs: number }[]>();
    for (const instance of instances) await saturate(`${instance.url}`, pick(options, 100, 1000));
    for (let repeat = 1; repeat <= repeats; repeat++) {
      for (const instance of instances) {
        progress(`workers: run ${repeat}/${repeats}, ${instance.workers} worker(s)`);
        for (const mode of ['saturation', 'paced'] as const) {
          const cpu = instance.cpuMicros();
          const result = mode === 'saturation' ? await saturate(instance.url, durationMs) : await paced(instance.url, PACED_RATE, durationMs);
          const key = `${instance.workers}/${mode}`;
          samples.set(key, [...(samples.get(key) ?? []), { result, cpuUs: (instance.cpuMicros() - cpu) / Math.max(1, result.completed) }]);
        }
      }
    }
    return summarize(samples, repeats);
  } finally {
    for (const instance of instances) await instance.stop();
    await upstream.stop();
    await redis.release();
    rmSync(dir, { recursive: true, force: true });
  }
}

function summarize(samples: Map<string, { result: LoadResult; cpuUs: number }[]>, repeats: number): WorkersResult {
  const rows: WorkersRow[] = [];
  for (const workers of [1, 2]) {
    for (const mode of ['saturation', 'paced'] as const) {
      const runs = samples.get(`${workers}/${mode}`) ?? [];
      rows.push({
        workers,
        mode,
        requestsPerSec: figure(runs.map((r) => r.result.requestsPerSec)),
        p99Ms: figure(runs.map((r) => r.result.p99Ms)),
        cpuUsPerRequest: figure(runs.map((r) => r.cpuUs)),
        errors: runs.reduce((sum, r) => sum + r.result.errors + r.result.non2xx, 0),
      });
    }
  }
  const one = samples.get('1/saturation') ?? [];
  const two = samples.get('2/saturation') ?? [];
  const ratio = round(median(two.slice(0, one.length).map((run, i) => run.result.requestsPerSec / one[i]!.result.requestsPerSec)), 3);
  return {
    rows,
    repeats,
    notes: [
      `2 workers ÷ 1 worker, requests/s at saturation (median of per-repeat ratios): ${ratio}`,
      `The load generator, the upstream, Redis and the workers share this machine's ${availableParallelism()} cores: a second worker can only use what they leave, and the primary's hand-off of each new connection adds its own CPU.`,
    ],
  };
}

const show = (f: Figure, digits = 0) => `${round(f.median, digits).toLocaleString('en-US')} (${round(f.min, digits).toLocaleString('en-US')}–${round(f.max, digits).toLocaleString('en-US')})`;

export function printWorkers(result: WorkersResult): string {
  const table = textTable(
    ['workers', 'load', 'req/s', 'p99 ms', 'CPU µs/req', 'errors'],
    result.rows.map((r) => [r.workers, r.mode === 'paced' ? `paced ${PACED_RATE}/s` : 'saturation', show(r.requestsPerSec), show(r.p99Ms, 2), show(r.cpuUsPerRequest), r.errors]),
  );
  return [table, `medians (min–max) of ${result.repeats} run(s)`, ...result.notes].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    console.log(`\n${printWorkers(await runWorkersBench(parseOptions()))}`);
  });
}
