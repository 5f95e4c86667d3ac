// The failover-bound tests' scenario, on Sentinel or on a Cluster: two
// instances with their own clients and engines, an hour's quota. Some of it
// is admitted and replicated; then the replica is made to lose writes for
// real (test/helpers/replication-hold.ts) and more is admitted; the master
// is killed and its replica promoted under steady load, until both instances
// decide on the promoted master again, and as long again after. Counts only.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '../../src/core/decision.js';
import { parseRule } from '../../src/policies/rule.js';
import type { ResilientEngine } from '../../src/limiter/engine/resilient-engine.js';
import type { RedisClient } from '../../src/stores/redis/scripts.js';
import type { RedisCluster } from '../helpers/redis-cluster.js';
import type { SentinelSetup } from '../helpers/redis-sentinel.js';
import { holdReplication } from '../helpers/replication-hold.js';
import { eventually, resilientEngine } from '../helpers/resilient-engine.js';

export const QUOTA = 600;
/** Admitted and replicated before the replica starts losing writes. */
export const REPLICATED = 300;
/** Admitted by the master after the replica stopped hearing it: lost in the failover. */
export const LOST = 100;
/** The bound's margin: a tenth of what was left at the kill (a stale view of the other instance's last admissions, a reply in flight). */
const MARGIN = (QUOTA - REPLICATED - LOST) / 10;
/** The published bound (docs/resilience.md): the quota, plus the writes lost (what the lag admitted), plus the margin. */
export const BOUND = QUOTA + LOST + MARGIN;
const rule = parseRule({ policy: 'sliding_window_log', limit: QUOTA, windowMs: 3_600_000 });

/** How a topology fails over: the master that holds the quota's key, its replica held, the master killed. */
export interface FailoverControls {
  masterPort: number;
  pauseReplica(): void;
  resumeReplica(): void;
  killMaster(): Promise<void>;
  waitForPromotion(): Promise<void>;
}

export interface FailingOver extends FailoverControls {
  /** A new client of the topology (each instance has its own). */
  client(): RedisClient;
}

/** A Sentinel setup's failover: its one replica held, its master killed, the promotion awaited. */
export function sentinelFailover(setup: SentinelSetup): FailoverControls {
  const oldMaster = setup.master.port;
  return {
    masterPort: oldMaster,
    pauseReplica: () => setup.replica.pause(),
    resumeReplica: () => setup.replica.resume(),
    killMaster: () => setup.master.kill(),
    waitForPromotion: async () => {
      await setup.waitForPromotion(oldMaster);
    },
  };
}

/** A Cluster's failover of the master on port `master`, whose replica is on `replica`. */
export function clusterFailover(cluster: RedisCluster, master: number, replica: number): FailoverControls {
  return {
    masterPort: master,
    pauseReplica: () => cluster.pauseNode(replica),
    resumeReplica: () => cluster.resumeNode(replica),
    killMaster: () => cluster.killNode(master),
    waitForPromotion: () => cluster.waitForFailover(master),
  };
}

export interface FailoverOutcome {
  admitted: number;
  /** Units the instances charged back as lost (Engine.counters().restoredUnits). */
  restored: number;
  fallbackAdmitted: number;
}

/** Runs the scenario on `tenant`'s quota; closes what it opened. */
export async function quotaAcrossFailover(topology: FailingOver, tenant: string): Promise<FailoverOutcome> {
  const clients = [0, 1].map(() => topology.client());
  for (const client of clients) client.on('error', () => undefined);
  const engines = clients.map((redis) => resilientEngine({ redis, instances: 2, hotKey: { autoLeaseRatePerSec: 0 } }));
  const decisions: Decision[] = [];
  const spend = async (n: number) => {
    for (let i = 0; i < n; i += 2) decisions.push(...(await Promise.all(engines.map((engine) => engine.decide({ tag: tenant, name: 'orders' }, rule)))));
  };
  try {
    await spend(REPLICATED);
    await holdReplication(topology.masterPort, () => topology.pauseReplica(), tenant);
    await spend(LOST);
    assert.equal(decisions.filter((d) => d.allowed).length, REPLICATED + LOST, 'all of it admitted before the kill (on the old master, or by a fallback its late reply reconciled)');
    await topology.killMaster();
    topology.resumeReplica();
    let running = true;
    const flow = (async () => {
      while (running) {
        await spend(2);
        await sleep(5);
      }
    })();
    await topology.waitForPromotion();
    await untilBothOnRedis(engines, tenant);
    const afterBack = decisions.length;
    await eventually(() => decisions.length >= afterBack + 2 * (QUOTA - REPLICATED - LOST), 30_000, 'load after the failover');
    running = false;
    await flow;
    return {
      admitted: decisions.filter((d) => d.allowed).length,
      restored: engines.reduce((sum, engine) => sum + engine.counters().restoredUnits, 0),
      fallbackAdmitted: decisions.filter((d) => d.allowed && d.source === 'fallback').length,
    };
  } finally {
    await Promise.all(engines.map((engine) => engine.close()));
    for (const client of clients) client.disconnect();
  }
}

async function untilBothOnRedis(engines: ResilientEngine[], tenant: string): Promise<void> {
  const back = new Set<number>();
  await eventually(async () => {
    for (const [i, engine] of engines.entries()) if ((await engine.decide({ tag: tenant, name: 'probe' }, rule)).source === 'redis') back.add(i);
    return back.size === engines.length;
  }, 30_000, 'both instances on the promoted master');
}
