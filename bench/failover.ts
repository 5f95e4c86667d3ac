// npm run bench:failover [-- --quick]
// What a Redis failover costs in admissions, on a Cluster and on Sentinel:
// two instances (engines on their own clients) offer 2× one key's rate, the
// master serving the key is killed (SIGKILL) and its replica promoted. Over
// the run, admitted − allowed, where allowed = capacity + rate × elapsed (the
// bucket starts full): before the kill, from the kill until decisions are on
// Redis again (the failover window), and after it. Replication lag is made,
// not hoped for: `lagMs` before the kill the replica is paused and its link
// filled (test/helpers/replication-hold.ts), so the writes the master
// acknowledges from then on are lost with it; the quota's rows print how many
// (the log's entries on the master before the kill, on the replica after).
import { pino } from 'pino';
import { bucketKey } from '../src/core/ids.js';
import { parseRule } from '../src/policies/rule.js';
import { createEngine } from '../src/engine-factory/create-engine.js';
import { isMain, runMain } from './lib/cleanup.js';
import { startTopology, type TopologyName } from './lib/failover-topology.js';
import { round } from './lib/latency.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';

const CAPACITY = 50;
const RATE = 100;
const INSTANCES = 2;
/** A quota whose memory outlasts the failover: an hour's sliding log with 500 left when the master is killed. */
const quotaFor = (beforeMs: number) => (2 * RATE * beforeMs) / 1000 + 500;

/** The quota's sliding log (its own sorted set). */
const LOG_KEY = bucketKey('failover', 'orders').key;

export type Scenario = 'token_bucket' | 'quota';

const ruleFor = (scenario: Scenario, beforeMs: number) =>
  scenario === 'quota'
    ? parseRule({ policy: 'sliding_window_log', limit: quotaFor(beforeMs), windowMs: 3_600_000 })
    : parseRule({ policy: 'token_bucket', capacity: CAPACITY, refillPerSecond: RATE });

export interface FailoverPhase {
  phase: string;
  fromMs: number;
  toMs: number;
  offered: number;
  admitted: number;
  /** What the limit allows in the phase: the rate × its length (+ the capacity in the first). */
  allowed: number;
  bySource: Record<string, number>;
}

export async function runFailoverBench(options: BenchOptions, topologyName: TopologyName, scenario: Scenario, lagMs: number, progress: (line: string) => void = console.log): Promise<FailoverPhase[]> {
  const topology = await startTopology(topologyName);
  const logger = pino({ level: 'silent' });
  const clients = Array.from({ length: INSTANCES }, () => topology.client());
  for (const client of clients) client.on('error', () => undefined);
  const engines = clients.map((client) => createEngine({ redis: client, instances: INSTANCES, logger, hotKey: { autoLeaseRatePerSec: 0 } }));
  const events: { atMs: number; admitted: boolean; source: string }[] = [];
  const beforeMs = pick(options, 2000, 5000);
  const afterMs = pick(options, 2000, 5000);
  const rule = ruleFor(scenario, beforeMs);
  try {
    await Promise.all(engines.map((engine) => engine.peek({ tag: 'warm-up', name: 'warm-up' }, rule)));
    let killedAt = Number.POSITIVE_INFINITY;
    let backAt = Number.POSITIVE_INFINITY;
    const start = performance.now();
    const failover = (async () => {
      await sleep(beforeMs - lagMs);
      const held = performance.now();
      if (lagMs > 0) await topology.holdReplication();
      await sleep(Math.max(0, lagMs - (performance.now() - held)));
      const acknowledged = scenario === 'quota' ? await topology.entriesOn('master', LOG_KEY) : 0;
      killedAt = performance.now() - start;
      progress(`failover: ${topologyName} master ${topology.master} killed at ${round(killedAt)} ms, its replica ${topology.replica} ${lagMs} ms behind`);
      await topology.killMaster();
      topology.resumeReplica();
      if (scenario === 'quota') {
        await sleep(300); // the replica reads what its socket still held
        const survived = await topology.entriesOn('replica', LOG_KEY);
        progress(`failover: the old master had acknowledged ${acknowledged} entries, ${survived} reached the replica: ${acknowledged - survived} writes lost`);
      }
      await topology.waitForPromotion();
      progress(`failover: replica promoted at ${round(performance.now() - start)} ms`);
    })();
    // 2× the rate over both instances, paced, until the promoted replica has decided for `afterMs`.
    await pacedUntil(2 * RATE, () => performance.now() - start > Math.min(backAt + afterMs, 60_000), async (seq) => {
      const at = performance.now() - start;
      const decision = await engines[seq % INSTANCES]!.decide({ tag: 'failover', name: 'orders' }, rule);
      events.push({ atMs: at, admitted: decision.allowed, source: decision.source });
      if (at > killedAt && decision.source === 'redis' && backAt === Number.POSITIVE_INFINITY) backAt = at;
    });
    await failover;
    await sleep(200); // the charges and restorations sent after the last decisions land
    for (const [i, engine] of engines.entries()) {
      const { chargedUnits, restoredUnits } = engine.counters();
      progress(`instance ${i}: fallback admissions charged back ${chargedUnits}, lost writes restored ${restoredUnits}`);
    }
    return phases(events, killedAt, Math.min(backAt, performance.now() - start), scenario === 'quota' ? quotaFor(beforeMs) : undefined);
  } finally {
    await Promise.all(engines.map((engine) => engine.close()));
    for (const client of clients) client.disconnect();
    await topology.stop();
  }
}

/** offer()'s open loop, run until `done` says so (the failover's length is not known ahead). */
async function pacedUntil(rate: number, done: () => boolean, call: (seq: number) => Promise<void>): Promise<void> {
  const pending: Promise<void>[] = [];
  const start = performance.now();
  let sent = 0;
  while (!done()) {
    while (sent * (1000 / rate) <= performance.now() - start) pending.push(call(sent++));
    await sleep(1);
  }
  await Promise.all(pending);
}

/** `quota`: the whole run's allowance, for the quota scenario; else the token bucket's rate. */
function phases(events: { atMs: number; admitted: boolean; source: string }[], killedAt: number, backAt: number, quota: number | undefined): FailoverPhase[] {
  const end = Math.max(...events.map((e) => e.atMs));
  const spans: [string, number, number][] = [
    ['before the kill', 0, killedAt],
    ['failover window (kill → back on Redis)', killedAt, backAt],
    ['after, on the promoted replica', backAt, end],
  ];
  return spans.map(([phase, fromMs, toMs], index) => {
    const inside = events.filter((e) => e.atMs >= fromMs && e.atMs < toMs);
    const bySource: Record<string, number> = {};
    for (const e of inside) bySource[e.source] = (bySource[e.source] ?? 0) + 1;
    return {
      phase,
      fromMs: round(fromMs),
      toMs: round(toMs),
      offered: inside.length,
      admitted: inside.filter((e) => e.admitted).length,
      // The quota allows QUOTA over the whole run (one window), charged to the first phase.
      allowed: quota !== undefined ? (index === 0 ? quota : 0) : Math.floor(((toMs - fromMs) / 1000) * RATE + (index === 0 ? CAPACITY : 0)),
      bySource,
    };
  });
}

export function printFailover(rows: FailoverPhase[]): string {
  const total = rows.reduce((sum, r) => ({ offered: sum.offered + r.offered, admitted: sum.admitted + r.admitted, allowed: sum.allowed + r.allowed }), { offered: 0, admitted: 0, allowed: 0 });
  return textTable(
    ['phase', 'from ms', 'to ms', 'offered', 'admitted', 'allowed', 'admitted − allowed', 'sources'],
    [
      ...rows.map((r) => [r.phase, r.fromMs, r.toMs, r.offered, r.admitted, r.allowed, r.admitted - r.allowed, Object.entries(r.bySource).map(([s, n]) => `${s} ${n}`).join(', ')]),
      ['whole run', 0, rows.at(-1)?.toMs, total.offered, total.admitted, total.allowed, total.admitted - total.allowed, ''],
    ],
  );
}

/** Every topology × limit × lag, or one topology's (FAILOVER_TOPOLOGY=cluster|sentinel). */
function runsOf(only: string | undefined): [TopologyName, Scenario, number][] {
  const topologies: TopologyName[] = only === 'cluster' || only === 'sentinel' ? [only] : ['cluster', 'sentinel'];
  return topologies.flatMap((topology) => (['token_bucket', 'quota'] as const).flatMap((scenario) => [0, 1000].map((lag): [TopologyName, Scenario, number] => [topology, scenario, lag])));
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const options = parseOptions();
    for (const [topology, scenario, lagMs] of runsOf(process.env.FAILOVER_TOPOLOGY)) {
      const rows = await runFailoverBench(options, topology, scenario, lagMs);
      const limit = scenario === 'quota' ? `${quotaFor(pick(options, 2000, 5000))} an hour (sliding log, 500 left at the kill)` : `${CAPACITY} then ${RATE}/s (token bucket)`;
      console.log(`\n${topology}: replica ${lagMs} ms behind when the master is killed; limit ${limit}, offered ${2 * RATE}/s over ${INSTANCES} instances\n${printFailover(rows)}`);
    }
  });
}
