// npm run bench:decision [-- --quick]
// The decision service's faces in one run, 64 concurrent clients each:
// gRPC ShouldRateLimit (h2load, 64 streams on one connection), forward-auth
// /decide (autocannon) and Sluice's own proxied request, all on one Sluice
// process on Redis; the gRPC stack alone with a fixed answer (Sluice's
// node:http2 face against @grpc/grpc-js's server); then nginx + auth_request +
// Sluice (examples/decision/nginx.conf) beside nginx alone and Sluice as the
// proxy. CPU µs per decision from /proc, every face once per round, three
// rounds, medians (bench/lib/decision-rounds.ts); the errors of a row by kind.
// A --cpu-prof profile of a fresh Sluice per face says where its time goes.
// Accuracy: two Sluice processes on one Redis, decisions via gRPC or /decide.
import { existsSync, readFileSync } from 'node:fs';
import { parseRule } from '../src/policies/rule.js';
import { ACCURACY_DEADLINE_MS } from './lib/accuracy-plan.js';
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { type DecisionAccuracyRow, forwardAuthAccuracy, grpcAccuracy } from './lib/decision-accuracy.js';
import { decisionAddresses, httpLoad, startNginxAuthRequest } from './lib/decision-load.js';
import { grpcH2load, h2loadExists } from './lib/grpc-h2load.js';
import { type ProfileShare, profiledRun } from './lib/cpu-profile.js';
import type { LoadResult } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { medianRow, roundRatios } from './lib/decision-rounds.js';
import { binaryExists, NGINX_PLAIN, startNginx } from './lib/native-peers.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { scriptCalls } from './lib/redis-info.js';
import { benchRedis, type RedisServer } from './lib/servers.js';
import { textTable } from './lib/table.js';

const GRPC_ROW = 'gRPC ShouldRateLimit (h2load, 1 connection, 64 streams)';
const FORWARD_AUTH_ROW = 'forward-auth GET /decide (autocannon, 64 connections)';

/** So large nothing is refused: the figures are the cost of deciding. */
const NEVER = parseRule({ policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000_000 });
const ACCURACY_RULE = parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 100 });

export interface DecisionRow {
  target: string;
  perSec: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU µs per decision (or request) of each process serving it, and their sum. */
  cpuUs: { sluice: number; nginx: number; total: number };
  notOk: number;
  errors: number;
  errorKinds: Record<string, number>;
}

export interface DecisionResult {
  rows: DecisionRow[];
  /** gRPC CPU per decision ÷ forward-auth's, per round side by side and their median (target ≤ 1.5). */
  grpcOverForwardAuth: { median: number; rounds: number[] } | undefined;
  /** The tail of nginx's error log when it logged anything. */
  nginxErrors: string[];
  profiles: { face: string; shares: ProfileShare[] }[];
  accuracy: DecisionAccuracyRow[];
  skipped: string[];
}

type Face = { name: string; run: () => Promise<LoadResult>; sluice?: Child; nginx?: Child };

async function measure(face: Face): Promise<DecisionRow> {
  const before = { sluice: face.sluice?.cpuMicros() ?? 0, nginx: face.nginx?.cpuMicros() ?? 0 };
  const result = await face.run();
  const per = (now: number, then: number) => (result.completed ? round((now - then) / result.completed, 1) : 0);
  const sluice = face.sluice ? per(face.sluice.cpuMicros(), before.sluice) : 0;
  const nginx = face.nginx ? per(face.nginx.cpuMicros(), before.nginx) : 0;
  return { target: face.name, perSec: result.requestsPerSec, p50Ms: result.p50Ms, p99Ms: result.p99Ms, cpuUs: { sluice, nginx, total: round(sluice + nginx, 1) }, notOk: result.non2xx, errors: result.errors, errorKinds: result.errorKinds ?? {} };
}

/** A fresh Sluice under --cpu-prof, one face's load, then its profile summarised. */
async function profileFace(face: string, args: object, load: (child: Child) => Promise<unknown>): Promise<{ face: string; shares: ProfileShare[] }> {
  const { shares } = await profiledRun(face, 'sluice-decision.ts', args, load);
  return { face, shares };
}

export async function runDecisionBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<DecisionResult> {
  const durationMs = pick(options, 500, 5000);
  const redis = await benchRedis();
  const children: Child[] = [];
  const skipped: string[] = [];
  try {
    progress('decision: starting upstream, Sluice (gateway + decision service) and nginx');
    const upstream = await forkServer('upstream alone', 'upstream.ts', {});
    children.push(upstream);
    const args = { upstream: upstream.url, redisUrl: redis.url, rule: NEVER };
    const sluice = await forkServer('Sluice decision service', 'sluice-decision.ts', args);
    children.push(sluice);
    const { decisionUrl, grpcAddress, gatewayUrl } = decisionAddresses(sluice);
    if (!h2loadExists()) throw new Error('bench:decision loads the gRPC face with h2load: apt-get install -y nghttp2-client');
    const floors = [await forkServer('gRPC floor, Sluice', 'grpc-floor.ts', { stack: 'sluice' }), await forkServer('gRPC floor, grpc-js', 'grpc-floor.ts', { stack: 'grpc-js' })];
    children.push(...floors);
    const faces: Face[] = [
      { name: GRPC_ROW, run: () => grpcH2load(grpcAddress, durationMs), sluice },
      { name: FORWARD_AUTH_ROW, run: () => httpLoad(decisionUrl, '/decide', durationMs, true), sluice },
      { name: 'Sluice as the proxy (GET /orders, 64 connections)', run: () => httpLoad(gatewayUrl, '/orders', durationMs, false), sluice },
      { name: 'gRPC stack alone, fixed answer: Sluice (node:http2 + protobufjs)', run: () => grpcH2load(floors[0]!.url, durationMs), sluice: floors[0] },
      { name: 'gRPC stack alone, fixed answer: @grpc/grpc-js server', run: () => grpcH2load(floors[1]!.url, durationMs), sluice: floors[1] },
    ];
    let nginxLog: string | undefined;
    if (binaryExists('nginx')) {
      const withAuth = await startNginxAuthRequest(upstream.url, decisionUrl);
      const plain = await startNginx(upstream.url, false);
      children.push(withAuth, plain);
      nginxLog = withAuth.errorLog;
      faces.push({ name: 'nginx + auth_request + Sluice (GET /orders, 64 connections)', run: () => httpLoad(withAuth.url, '/orders', durationMs, false), sluice, nginx: withAuth });
      faces.push({ name: `${NGINX_PLAIN} alone (GET /orders, 64 connections)`, run: () => httpLoad(plain.url, '/orders', durationMs, false), nginx: plain });
    } else skipped.push('nginx + auth_request and nginx alone: no nginx binary');
    for (const face of faces) await face.run(); // warm-up: JIT, pools, connections
    const rounds: DecisionRow[][] = [];
    for (let r = 1; r <= pick(options, 1, 3); r++) {
      const measured: DecisionRow[] = [];
      for (const face of faces) {
        progress(`decision: round ${r}, ${face.name}`);
        measured.push(await measure(face));
      }
      rounds.push(measured);
    }
    const rows = faces.map((_, i) => medianRow(rounds.map((measured) => measured[i]!)));
    progress('decision: profiles (--cpu-prof) of each face on a fresh Sluice');
    const profiles = [
      await profileFace('gRPC', args, (child) => grpcH2load(decisionAddresses(child).grpcAddress, durationMs)),
      await profileFace('forward-auth', args, (child) => httpLoad(decisionAddresses(child).decisionUrl, '/decide', durationMs, true)),
      await profileFace('Sluice as the proxy', args, (child) => httpLoad(decisionAddresses(child).gatewayUrl, '/orders', durationMs, false)),
    ];
    progress('decision: accuracy, two Sluice processes on one Redis');
    const accuracy = await accuracyRows(upstream.url, redis, pick(options, 1500, 5000));
    const ratios = roundRatios(rounds, GRPC_ROW, FORWARD_AUTH_ROW);
    const grpcOverForwardAuth = ratios.length > 0 ? { median: round(median(ratios), 2), rounds: ratios } : undefined;
    const nginxErrors = nginxLog && existsSync(nginxLog) ? readFileSync(nginxLog, 'utf8').split('\n').filter(Boolean).slice(-10) : [];
    return { rows, grpcOverForwardAuth, nginxErrors, profiles, accuracy, skipped };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await redis.release();
  }
}

async function accuracyRows(upstream: string, redis: RedisServer, durationMs: number): Promise<DecisionAccuracyRow[]> {
  const args = { upstream, redisUrl: redis.url, rule: ACCURACY_RULE, deadlineMs: ACCURACY_DEADLINE_MS };
  const pair = [await forkServer('Sluice A', 'sluice-decision.ts', args), await forkServer('Sluice B', 'sluice-decision.ts', args)];
  const client = redis.client();
  try {
    const addresses = pair.map(decisionAddresses);
    const rate = ACCURACY_RULE.policy === 'token_bucket' ? ACCURACY_RULE.refillPerSecond * 4 : 400;
    const counted = async (run: () => Promise<DecisionAccuracyRow>) => {
      const before = (await scriptCalls(client)).calls;
      const row = await run();
      return { ...row, redisScriptCalls: (await scriptCalls(client)).calls - before };
    };
    return [
      await counted(() => grpcAccuracy(addresses.map((a) => a.grpcAddress), ACCURACY_RULE, rate, durationMs)),
      await counted(() => forwardAuthAccuracy(addresses.map((a) => a.decisionUrl), ACCURACY_RULE, rate, durationMs)),
    ];
  } finally {
    client.disconnect();
    for (const child of pair) await child.stop();
  }
}

export function printDecision(result: DecisionResult): string {
  const rows = textTable(
    ['target', 'per s', 'p50 ms', 'p99 ms', 'CPU µs Sluice', 'CPU µs nginx', 'CPU µs total', 'not OK', 'errors'],
    result.rows.map((r) => [r.target, r.perSec, r.p50Ms, r.p99Ms, r.cpuUs.sluice, r.cpuUs.nginx, r.cpuUs.total, r.notOk, r.errors]),
  );
  const errors = result.rows.filter((r) => Object.keys(r.errorKinds).length > 0).map((r) => `errors of ${r.target}: ${Object.entries(r.errorKinds).map(([kind, n]) => `${kind} ×${n}`).join(', ')}`);
  const ratio = result.grpcOverForwardAuth === undefined ? [] : [`gRPC decision ÷ forward-auth decision, Sluice CPU: ${result.grpcOverForwardAuth.median}× (median of the rounds: ${result.grpcOverForwardAuth.rounds.join(', ')}; target ≤ 1.5×)`];
  const nginx = result.nginxErrors.length > 0 ? ['nginx + auth_request error log (last lines):', ...result.nginxErrors] : [];
  const profiles = result.profiles.map((p) => `${p.face}: ${p.shares.map((s) => `${s.where} ${s.percent} %`).join(', ')}`);
  const accuracy = textTable(['face', 'instances', 'sent', 'allowed', 'expected', 'allowed / expected', 'within ±1 %', 'Redis script calls'], result.accuracy.map((a) => [a.face, a.instances, a.sent, a.allowed, a.expected, a.ratio, a.withinOnePercent ? 'yes' : 'NO', a.redisScriptCalls ?? '']));
  return [rows, ...ratio, ...errors, ...nginx, '', 'where the time goes (share of non-idle CPU, --cpu-prof):', ...profiles, '', accuracy, ...result.skipped.map((s) => `skipped: ${s}`)].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runDecisionBench(parseOptions());
    console.log(`\n${printDecision(result)}`);
  });
}
