// What a failover costs, bounded: Redis Sentinel (one master, one replica,
// three sentinels), two instances with their own clients and engines, an
// hour's quota. The replica is made to lose the last writes for real
// (test/helpers/replication-hold.ts), the master is killed, the sentinels
// promote the replica. Without the bound, each instance's fallback starts
// from a whole 1/N of the quota and the promoted master lacks the lost
// writes: hundreds over. With it, the fallback holds each instance to its
// share of what Redis last said was left, so what the failover can add is the
// lost writes themselves (the first word of the promoted master is also held
// to what the instances last saw, last-states.ts, which takes some or all of
// them back). Counts, never milliseconds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '../../src/core/decision.js';
import { parseRule } from '../../src/core/rule.js';
import type { ResilientEngine } from '../../src/limiter/resilient-engine.js';
import { connectRedis } from '../../src/stores/redis/connect.js';
import type { RedisClient } from '../../src/stores/redis/scripts.js';
import { MASTER_NAME, type SentinelSetup, startSentinels } from '../helpers/redis-sentinel.js';
import { holdReplication } from '../helpers/replication-hold.js';
import { eventually, resilientEngine } from './helpers.js';

const QUOTA = 600;
const REPLICATED = 300;
/** Admitted by the master after the replica stopped hearing it: lost in the failover. */
const LOST = 100;
/** Left when the master dies: QUOTA − REPLICATED − LOST. */
const LEFT = QUOTA - REPLICATED - LOST;
/** The bound's margin: a tenth of what was left (a stale view of the other instance's last admissions, a reply in flight at the kill). */
const MARGIN = LEFT / 10;
/** The published bound (docs/resilience.md): the quota, plus the writes lost (what the lag admitted), plus the margin. */
const BOUND = QUOTA + LOST + MARGIN;
const rule = parseRule({ policy: 'sliding_window_log', limit: QUOTA, windowMs: 3_600_000 });

let setup: SentinelSetup;
let clients: RedisClient[] = [];
let engines: ResilientEngine[] = [];
before(async () => {
  setup = await startSentinels();
  clients = [0, 1].map(() => connectRedis({ sentinel: { name: MASTER_NAME, sentinels: setup.sentinels } }));
  for (const client of clients) client.on('error', () => undefined);
  engines = clients.map((redis) => resilientEngine({ redis, instances: 2, hotKey: { autoLeaseRatePerSec: 0 } }));
});
after(async () => {
  await Promise.all(engines.map((engine) => engine.close()));
  for (const client of clients) client.disconnect();
  await setup?.stop();
});

/** `n` decisions on the quota, alternating instances, two at a time. */
async function spend(n: number, into: Decision[]): Promise<void> {
  for (let i = 0; i < n; i += 2) into.push(...(await Promise.all(engines.map((engine) => engine.decide('quota-fo', 'orders', rule)))));
}

test('a quota across a Sentinel failover that loses the last writes: two instances admit at most the quota plus the lost writes, within a tenth of what was left', async () => {
  const decisions: Decision[] = [];
  await spend(REPLICATED, decisions);
  await holdReplication(setup.master.port, () => setup.replica.pause(), 'quota-fo');
  await spend(LOST, decisions);
  assert.equal(decisions.filter((d) => d.allowed).length, REPLICATED + LOST, 'all of it admitted before the kill (on the old master, or by a fallback its late reply reconciled)');
  const oldMaster = setup.master.port;
  await setup.master.kill();
  setup.replica.resume();
  // Steady load through the failover, until both instances decide on the promoted replica again, then as much again.
  let running = true;
  const flow = (async () => {
    while (running) {
      await spend(2, decisions);
      await sleep(5);
    }
  })();
  await setup.waitForPromotion(oldMaster);
  const backOnRedis = new Set<number>();
  await eventually(async () => {
    for (const [i, engine] of engines.entries()) if ((await engine.decide('quota-fo', 'probe', rule)).source === 'redis') backOnRedis.add(i);
    return backOnRedis.size === engines.length;
  }, 30_000, 'both instances on the promoted replica');
  const afterBack = decisions.length;
  await eventually(() => decisions.length >= afterBack + 2 * LEFT, 30_000, 'load after the failover');
  running = false;
  await flow;
  const admitted = decisions.filter((d) => d.allowed).length;
  const restored = engines.reduce((sum, engine) => sum + engine.counters().restoredUnits, 0);
  assert.ok(admitted <= BOUND, `admitted ${admitted} of a quota of ${QUOTA} (bound ${BOUND}); lost writes restored: ${restored}`);
  assert.ok(decisions.some((d) => d.source === 'fallback' && d.allowed), 'the fallback admitted during the failover');
});
