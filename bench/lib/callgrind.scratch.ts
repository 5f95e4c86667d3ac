// scratch: instructions per decision under callgrind, gRPC (h2load) vs forward-auth (h2load --h1)
import { execFileSync, fork } from 'node:child_process';
import { readdirSync, readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forkServer } from './children.js';
import { benchRedis } from './servers.js';
import { parseRule } from '../../src/core/rule.js';
const NEVER = parseRule({ policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000_000 });
const dir = mkdtempSync(join(tmpdir(), 'cg-'));
const redis = await benchRedis();
const upstream = await forkServer('up', 'upstream.ts', {});
const child = fork(new URL('./servers/sluice-decision.ts', import.meta.url), [JSON.stringify({ upstream: upstream.url, redisUrl: redis.url, rule: NEVER })], {
  execPath: 'valgrind', execArgv: ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${dir}/cg.%p`, process.execPath, '--import', 'tsx'], stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
const url: string = await new Promise((ok) => child.once('message', (m: { url: string }) => ok(m.url)));
const [decisionUrl, grpcAddress] = url.split('|') as [string, string];
const N = Number(process.env.N ?? 3000);
const cg = (...a: string[]) => execFileSync('callgrind_control', [...a, String(child.pid)], { encoding: 'utf8' });
const grpc = (n: number) => execFileSync('h2load', ['-n', String(n), '-c', '1', '-m', '64', '-H', 'content-type: application/grpc', '-H', 'te: trailers', '-d', '/tmp/grpc-exp/body.bin', `http://${grpcAddress}/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`], { encoding: 'utf8' });
const fa = (n: number) => execFileSync('h2load', ['--h1', '-n', String(n), '-c', '64', '-m', '1', '-H', 'x-api-key: bench-tenant-1', '-H', 'x-forwarded-method: GET', '-H', 'x-forwarded-uri: /orders', `${decisionUrl}/decide`], { encoding: 'utf8' });
const measure = (name: string, run: (n: number) => string) => {
  cg('-z'); cg('-i', 'on'); const out = run(N); cg('-i', 'off'); cg('-d');
  const ok = /(\d+) succeeded/.exec(out)![1];
  const files = readdirSync(dir).filter((f) => f.startsWith('cg.')).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  const text = readFileSync(join(dir, files[files.length - 1]!), 'utf8');
  const ir = Number(/^totals: (\d+)/m.exec(text)?.[1]);
  console.log(`${name}: ${ok} ok, ${(ir / Number(ok) / 1000).toFixed(1)} k instructions per decision`);
  return ir / Number(ok);
};
try {
  grpc(N); fa(N); grpc(N); fa(N);
  for (let i = 0; i < Number(process.env.REPS ?? 2); i++) { const g = measure('gRPC', grpc); const f = measure('forward-auth', fa); console.log('ratio', (g / f).toFixed(2)); }
} finally { child.kill('SIGKILL'); await upstream.stop(); await redis.release(); }
