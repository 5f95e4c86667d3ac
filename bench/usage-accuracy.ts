// npm run bench:usage-accuracy [-- --quick]  (also step 6 of `npm run bench`)
// Tokens per minute held across two instances on one Redis: a tenant's
// token-per-minute limit priced by usage (reserve `max_tokens`, settle the
// last event's `usage.total_tokens`), many concurrent streamed completions
// through two Sluice gateways sharing one redis-server, to the demo
// OpenAI-compatible upstream (src/demo/llm-upstream.ts). Each request's usage
// is drawn at random on both sides of its estimate, so settles both refund and
// charge debts. Compared: the tokens admitted (the usage of every request
// answered 200, in flight at the end included) with what the limit allows over
// the run (its capacity plus the refill), and with the bound
// docs/usage-limits.md states: the limit plus, for the requests in flight at
// once, their usage − estimate (here at most clients × (largest usage − estimate)).
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { type RunningSluice, startSluice } from '../src/app.js';
import { parseConfig } from '../src/decision-service/load-config.js';
import { type LlmUpstream, startLlmUpstream } from '../src/demo/llm-upstream.js';
import { isMain, onCleanup, runMain } from './lib/cleanup.js';
import { round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

const CAPACITY = 10_000;
const PER_SECOND = CAPACITY / 60;
const ESTIMATE = 100;
const USAGE_MIN = 20;
const USAGE_MAX = 200;
const API_KEY = 'key-usage-bench-0001';

export interface UsageAccuracyResult {
  durationMs: number;
  clients: number;
  instances: number;
  /** Tokens the limit allows over the run: its capacity plus the refill. */
  allowed: number;
  admittedTokens: number;
  admittedRequests: number;
  /** Per instance: requests answered 200. */
  perInstance: number[];
  refused: number;
  /** The stated bound: allowed + clients × (USAGE_MAX − ESTIMATE). */
  bound: number;
  /** The largest sum of (usage − estimate)+ over the requests in flight at one moment, as the clients saw it. */
  inFlightExcessPeak: number;
  load: { start: number[]; end: number[] };
}

const yaml = (redisUrl: string, upstream: string) => `
routes:
  - id: chat
    methods: [POST]
    path: /v1/chat/completions
    upstream: ${upstream}
    limits:
      - id: tpm
        key: tenant
        rule: { policy: token_bucket, capacity: ${CAPACITY}, refillPerSecond: ${PER_SECOND} }
        cost: { estimate: { fromBody: max_tokens, default: ${ESTIMATE} }, from: { json: usage.total_tokens } }
tenants:
  keys: [{ key: ${API_KEY}, tenant: bench-tenant }]
store: { url: ${redisUrl}, deadlineMs: 2000 }
log: { level: silent }
`;

interface Tally {
  tokens: number;
  requests: number;
  refused: number;
  perInstance: number[];
  excess: number;
  excessPeak: number;
}

/** One client: completions through `pool` until `endAt`; a refused one waits a little and tries again. */
async function client(pool: Pool, instance: number, endAt: number, tally: Tally): Promise<void> {
  while (performance.now() < endAt) {
    const usage = USAGE_MIN + Math.floor(Math.random() * (USAGE_MAX - USAGE_MIN + 1));
    const body = JSON.stringify({ model: 'demo', max_tokens: ESTIMATE, stream: true, test_usage: usage, messages: [{ role: 'user', content: 'hi' }] });
    const excess = Math.max(0, usage - ESTIMATE);
    let refused = false;
    tally.excess += excess;
    tally.excessPeak = Math.max(tally.excessPeak, tally.excess);
    try {
      const response = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' }, body });
      const text = await response.body.text();
      if (response.statusCode === 200 && text.endsWith('data: [DONE]\n\n')) {
        tally.tokens += usage;
        tally.requests++;
        tally.perInstance[instance]!++;
      } else if (response.statusCode === 429) {
        tally.refused++;
        refused = true;
      }
    } finally {
      tally.excess -= excess;
    }
    if (refused && performance.now() < endAt) await sleep(20 + Math.random() * 30);
  }
}

export async function runUsageAccuracyBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<UsageAccuracyResult> {
  const durationMs = pick(options, 6_000, 30_000);
  const clients = pick(options, 16, 32);
  const start = loadavg();
  const redis = await benchRedis();
  const llm: LlmUpstream = await startLlmUpstream();
  const stopLlm = onCleanup(() => llm.close());
  const gateways: RunningSluice[] = [];
  const pools: Pool[] = [];
  try {
    progress(`usage accuracy: two gateways on one Redis, ${clients} clients, ${durationMs / 1000} s`);
    for (let i = 0; i < 2; i++) {
      const gateway = await startSluice(parseConfig(yaml(redis.url, llm.url), { source: 'bench', env: { SLUICE_LISTEN: '127.0.0.1:0' } }), { shutdownGraceMs: 2_000 });
      gateways.push(gateway);
      pools.push(new Pool(gateway.url, { connections: clients }));
    }
    const tally: Tally = { tokens: 0, requests: 0, refused: 0, perInstance: [0, 0], excess: 0, excessPeak: 0 };
    const began = performance.now();
    const endAt = began + durationMs;
    // Clients alternate between the instances: half on each.
    await Promise.all(Array.from({ length: clients }, (_, i) => client(pools[i % 2]!, i % 2, endAt, tally)));
    // The refill counts until the last request was admitted, at the latest the end of the run.
    const ranMs = Math.min(performance.now(), endAt) - began;
    const allowed = Math.round(CAPACITY + (PER_SECOND * ranMs) / 1000);
    return {
      durationMs: Math.round(ranMs),
      clients,
      instances: 2,
      allowed,
      admittedTokens: tally.tokens,
      admittedRequests: tally.requests,
      perInstance: tally.perInstance,
      refused: tally.refused,
      bound: allowed + clients * (USAGE_MAX - ESTIMATE),
      inFlightExcessPeak: tally.excessPeak,
      load: { start, end: loadavg() },
    };
  } finally {
    for (const pool of pools) await pool.close();
    for (const gateway of gateways) await gateway.close();
    await stopLlm();
    await redis.release();
  }
}

export function printUsageAccuracy(r: UsageAccuracyResult): string {
  const rows = [
    ['tokens the limit allows over the run (capacity + refill)', r.allowed.toLocaleString('en-US')],
    ['tokens admitted (usage of every 200)', `${r.admittedTokens.toLocaleString('en-US')} (${round(r.admittedTokens / r.allowed, 3)} of the limit)`],
    ['stated bound (limit + clients × (largest usage − estimate))', `${r.bound.toLocaleString('en-US')} (${round(r.bound / r.allowed, 3)} of the limit)`],
    ['largest Σ (usage − estimate) in flight at once', r.inFlightExcessPeak.toLocaleString('en-US')],
    ['requests admitted (instance 1 / 2), refused', `${r.admittedRequests} (${r.perInstance.join(' / ')}), ${r.refused}`],
  ];
  return [
    textTable(['tokens per minute across two instances on one Redis', 'figure'], rows),
    `token bucket ${CAPACITY.toLocaleString('en-US')} tokens, ${round(PER_SECOND, 2)}/s; estimate ${ESTIMATE} (max_tokens), usage uniform ${USAGE_MIN}–${USAGE_MAX}; ${r.clients} clients, ${r.durationMs} ms; load ${r.load.start.map((v) => round(v, 2)).join(' ')} → ${r.load.end.map((v) => round(v, 2)).join(' ')}`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runUsageAccuracyBench(parseOptions());
    console.log(['', printUsageAccuracy(result)].join('\n'));
  });
}
