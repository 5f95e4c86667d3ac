// Where a server's CPU goes, function by function, from Linux perf (Debian's
// linux-perf): every 100 µs of the process's CPU a sample of its whole stack
// (kernel, V8's builtins and GC, JIT code; node's --perf-basic-prof names the
// JS frames), each charged to the innermost frame on it of Sluice's built
// code (dist/), of a library or of the bench server's file. A function's
// figure so holds what it costs with the builtins it calls, the objects it
// allocates, the syscalls it makes: --cpu-prof (cpu-profile.ts) charges
// those to the builtin or to "(program)", so there a decision's code looked
// smaller than the CPU it adds.
import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Child, measuredRun } from './children.js';
import { round } from './latency.js';

/** What a sample with no frame of dist/, of a library or of the bench server is charged to: node's core, V8, the kernel on their own. */
export const OUTSIDE = 'node, V8 and the kernel on their own (socket reads, the event loop, timers, GC)';

/** What a frame of the bench server's own file (not Sluice's code, not a library) is charged to. */
const BENCH_FILE = 'the bench server file';

/** One target's run under perf. */
export interface PerfRun {
  target: string;
  costs: PerfCosts;
}

export interface PerfCosts {
  /** CPU µs per request the samples add up to. */
  cpuUs: number;
  /** µs per request by innermost dist/ function, `folder/file.js name`, or OUTSIDE; largest first. */
  byFunction: [where: string, us: number][];
}

/** perf is installed (whether it may sample is for `perf record` to say). */
export function perfAvailable(): boolean {
  return spawnSync('perf', ['--version'], { stdio: 'ignore' }).status === 0;
}

// A JS frame of `perf script`: `<addr> JS:*name file:///…/dist/limiter/guard.js:74:14+0xf53 (/tmp/perf-1.map)`,
// `JS:*sendCommand /…/node_modules/ioredis/built/Redis.js:338:16+0x849 (…)`, `JS:^_write node:internal/streams/writable:453:16+0x…`.
const JS_FRAME = /JS:[*^~+]?(\S*) (?:file:\/\/)?(\S+?):\d+:\d+/;
// A sample's first line: `node  9587  2607.602427:     100000 cpu-clock: ` (the period, in ns).
const SAMPLE_HEAD = /:\s+(\d+)\s+cpu-clock:/;

/** Who a frame charges: a function of dist/, a library, the bench server's own file; undefined for node's core (look further out). */
function chargedTo(line: string): string | undefined {
  const frame = JS_FRAME.exec(line);
  if (!frame) return undefined;
  const [, name, url] = frame as unknown as [string, string, string];
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return `${url.slice(dist + '/dist/'.length)} ${name || '(anonymous)'}`;
  const library = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (library) return `library ${library[1]}`;
  return url.includes('/bench/') ? BENCH_FILE : undefined;
}

/**
 * Charges each sample of `perf script` output (its lines) to the innermost
 * frame of Sluice's dist/, of a library or of the bench server on its stack
 * (what node's core, V8 and the kernel did on their behalf goes with them);
 * µs per request over `requests`.
 */
export async function attribute(lines: AsyncIterable<string> | Iterable<string>, requests: number): Promise<PerfCosts> {
  const ns = new Map<string, number>();
  let total = 0;
  let period = 0;
  let charged = true;
  const charge = (where: string) => {
    ns.set(where, (ns.get(where) ?? 0) + period);
    charged = true;
  };
  for await (const line of lines) {
    const head = SAMPLE_HEAD.exec(line);
    if (head) {
      if (!charged) charge(OUTSIDE);
      period = Number(head[1]);
      total += period;
      charged = false;
      continue;
    }
    if (charged) continue;
    const where = chargedTo(line);
    if (where !== undefined) charge(where);
  }
  if (!charged) charge(OUTSIDE);
  const perRequest = (value: number) => value / 1000 / Math.max(1, requests);
  const byFunction = [...ns].map(([where, value]): [string, number] => [where, perRequest(value)]).sort((a, b) => b[1] - a[1]);
  return { cpuUs: perRequest(total), byFunction };
}

/** The folder of dist/ a charge is in (`limiter`), `libraries`, or the charge itself. */
export function folderOf(where: string): string {
  if (where.startsWith('library ')) return 'libraries';
  const folder = /^([\w-]+)\/\S+ /.exec(where);
  return folder ? folder[1]! : where;
}

/** µs per request by folder, largest first. */
function byFolder(costs: PerfCosts): Map<string, number> {
  const sums = new Map<string, number>();
  for (const [where, us] of costs.byFunction) {
    const folder = folderOf(where);
    sums.set(folder, (sums.get(folder) ?? 0) + us);
  }
  return new Map([...sums].sort((a, b) => b[1] - a[1]));
}

/**
 * A fresh server (`bench/lib/servers/<file>`) under perf: `load` once to warm
 * it up, once sampled; what the sampled load returned, and its costs per
 * completed request. Rejects when perf recorded nothing (not allowed to
 * sample, say), rather than report zeros.
 */
export async function perfRun<T extends { completed: number }>(name: string, file: string, args: object, load: (child: Child) => Promise<T>): Promise<{ result: T; costs: PerfCosts }> {
  let pid: number | undefined;
  try {
    return await measuredRun(`${name} (perf)`, file, args, () => ['--perf-basic-prof'], load, async (child, dir) => {
      pid = child.pid;
      const data = join(dir, 'perf.data');
      const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '10000', '-g', '-p', String(child.pid), '-o', data], { stdio: 'ignore' });
      const recorded = new Promise((resolve) => perf.once('exit', resolve));
      try {
        await sleep(300); // perf attaches to the running process
        const result = await load(child);
        perf.kill('SIGINT');
        await recorded;
        return { result, costs: await attributeRecording(data, result.completed) };
      } finally {
        if (perf.exitCode === null && perf.signalCode === null) perf.kill('SIGKILL'); // the load failed: no perf left behind
      }
    });
  } finally {
    if (pid !== undefined) rmSync(`/tmp/perf-${pid}.map`, { force: true }); // where --perf-basic-prof writes, whatever TMPDIR says
  }
}

/** `perf script` over the recording `data`, attributed; rejects when it fails or holds no sample. */
export async function attributeRecording(data: string, requests: number): Promise<PerfCosts> {
  const script = spawn('perf', ['script', '-i', data], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  script.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const closed = new Promise<number | null>((resolve) => script.once('close', resolve));
  const costs = await attribute(createInterface({ input: script.stdout }), requests);
  const code = await closed;
  if (code !== 0 || costs.cpuUs === 0) throw new Error(`perf recorded no sample of the server (perf script exited ${code}): ${stderr.trim().slice(-500)}`);
  return costs;
}

/** Each run's total by folder and its costliest functions; then what the second run (Sluice's code) adds over the first (the bare call), by folder. */
export function printPerfSplit(perf: readonly PerfRun[]): string[] {
  if (perf.length === 0) return [];
  const list = (entries: Iterable<[string, number]>, sign = false) =>
    [...entries].map(([where, us]) => `${where} ${sign && us >= 0 ? '+' : ''}${round(us, 2)}`).join(', ');
  const lines = perf.map(({ target, costs }) => {
    const top = costs.byFunction.filter(([where]) => where !== OUTSIDE && where !== BENCH_FILE && !where.startsWith('library ')).slice(0, 12);
    return `${target} (${round(costs.cpuUs, 1)} µs/request under perf): by folder ${list(byFolder(costs))}; costliest functions of dist/ ${list(top)}`;
  });
  const [bare, sluice] = perf as [PerfRun, PerfRun];
  const before = byFolder(bare.costs);
  const after = byFolder(sluice.costs);
  const added = [...new Set([...after.keys(), ...before.keys()])].map((folder): [string, number] => [folder, (after.get(folder) ?? 0) - (before.get(folder) ?? 0)]);
  added.sort((a, b) => b[1] - a[1]);
  lines.push(`${sluice.target} − ${bare.target}, under perf: ${round(sluice.costs.cpuUs - bare.costs.cpuUs, 1)} µs per request; by folder ${list(added, true)}`);
  return ['', 'where the CPU goes, paced (Linux perf; µs per request, charged to the innermost function of dist/, library or bench file on the stack):', ...lines];
}
