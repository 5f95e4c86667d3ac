// npm run bench:decision-instructions [-- --quick]
// User-space instructions per decision, gRPC ShouldRateLimit (h2load, 64
// streams on one connection) against forward-auth /decide (h2load --h1, 64
// connections), on one Sluice under `valgrind --tool=callgrind`: counts that
// do not move with the other work on the machine, as CPU time does. Counting
// is switched on only around each measured load (callgrind_control), after
// warm-up loads; kernel time is not counted.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseRule } from '../src/policies/rule.js';
import { ensureBuilt } from './lib/built.js';
import { forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { framedRequest, h2loadExists, RLS_PATH } from './lib/grpc-h2load.js';
import { round } from './lib/latency.js';
import { parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';

const NEVER = parseRule({ policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000_000 });

const h2load = (args: string[]): number => Number(/(\d+) succeeded/.exec(execFileSync('h2load', args, { encoding: 'utf8' }))?.[1] ?? 0);

function valgrindExists(): boolean {
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Instructions per answered call of one load, counted only while it runs. */
function instructionCounter(child: ChildProcess, dir: string, calls: number): (load: (n: number) => number) => number {
  const control = (...flags: string[]) => execFileSync('callgrind_control', [...flags, String(child.pid)], { stdio: 'ignore' });
  return (load) => {
    control('-z');
    control('-i', 'on');
    const done = load(calls);
    control('-i', 'off');
    control('-d');
    const dumps = readdirSync(dir).filter((name) => name.startsWith('out.')).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
    const totals = /^totals: (\d+)/m.exec(readFileSync(join(dir, dumps[dumps.length - 1]!), 'utf8'));
    return Number(totals?.[1] ?? 0) / Math.max(1, done);
  };
}

export async function runInstructionsBench(calls: number, rounds: number): Promise<string[]> {
  if (!valgrindExists() || !h2loadExists()) return ['skipped: needs valgrind and h2load (apt-get install -y valgrind nghttp2-client)'];
  const dir = mkdtempSync(join(tmpdir(), 'sluice-callgrind-'));
  const redis = await benchRedis();
  const upstream = await forkServer('upstream alone', 'upstream.ts', {});
  const args = JSON.stringify({ upstream: upstream.url, redisUrl: redis.url, rule: NEVER });
  const valgrind = ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${dir}/out.%p`, process.execPath, '--import', 'tsx'];
  ensureBuilt();
  const child = fork(new URL('./lib/servers/sluice-decision.ts', import.meta.url), [args], { execPath: 'valgrind', execArgv: valgrind, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  try {
    const url = await new Promise<string>((resolve) => child.once('message', (message: { url: string }) => resolve(message.url)));
    const [decisionUrl, grpcAddress] = url.split('|') as [string, string];
    writeFileSync(join(dir, 'body'), framedRequest('bench-tenant-0'));
    const grpc = (n: number) => h2load(['-n', String(n), '-c', '1', '-m', '64', '-H', 'content-type: application/grpc', '-H', 'te: trailers', '-d', `${dir}/body`, `http://${grpcAddress}${RLS_PATH}`]);
    const forwardAuth = (n: number) => h2load(['--h1', '-n', String(n), '-c', '64', '-H', 'x-api-key: bench-tenant-0', '-H', 'x-original-method: GET', '-H', 'x-original-uri: /orders', `${decisionUrl}/decide`]);
    const counted = instructionCounter(child, dir, calls);
    for (let w = 0; w < 3; w++) {
      grpc(calls); // warm-up: JIT, leases, connections
      forwardAuth(calls);
    }
    const lines = [`thousand instructions per decision (callgrind, ${calls} calls each):`];
    for (let r = 1; r <= rounds; r++) {
      const [g, f] = [counted(grpc), counted(forwardAuth)];
      lines.push(`round ${r}: gRPC ${round(g / 1000, 1)}, forward-auth ${round(f / 1000, 1)}, gRPC ÷ forward-auth ${round(g / f, 2)}`);
    }
    return lines;
  } finally {
    child.kill('SIGKILL');
    await upstream.stop();
    await redis.release();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const options = parseOptions();
    console.log((await runInstructionsBench(pick(options, 500, 5000), pick(options, 1, 2))).join('\n'));
  });
}
