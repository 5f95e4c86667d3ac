// The failover-bound scenario (failover-scenario.ts) through two real
// `sluice start` processes over HTTP: both gateways on the same Redis
// topology, one route with a quota of 600 an hour keyed by route (one key for
// every caller), a real upstream. 300 requests admitted and replicated, the
// replica made to lose writes for real, 100 more, the master killed and its
// replica promoted under steady load through both gateways, until both
// /readyz say mode redis, and as long again after: 2× the quota offered in
// all. Counts 2xx answers (admitted) and 429s; no other status is expected.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { startUpstream } from '../helpers/gateway-support.js';
import { holdReplication } from '../helpers/replication-hold.js';
import { SluiceProcess, writeWorkersConfig } from '../helpers/sluice-process.js';
import { BOUND, type FailoverControls, LOST, QUOTA, REPLICATED } from './failover-scenario.js';
import { eventually } from '../helpers/resilient-engine.js';

export interface GatewayTopology extends FailoverControls {
  /** The config's `store:` section as a flow map (sentinel or cluster). */
  storeYaml: string;
  /** The hash tag of the quota's Redis key (a cluster's padding goes to its slot). */
  hashTag: string;
}

export interface GatewaysOutcome {
  offered: number;
  admitted: number;
  refused: number;
  /** Each gateway's /readyz engine mode once the load is over. */
  modes: string[];
}

interface Gateway {
  process: SluiceProcess;
  url: string;
  agent: Agent;
  dir: string;
}

async function startGateway(topology: GatewayTopology, upstream: string): Promise<Gateway> {
  const setup = await writeWorkersConfig(
    'sluice-failover-gw-',
    topology.storeYaml,
    `routes:
  - { id: orders, path: /orders, upstream: '${upstream}', anonymous: true, limits: [{ id: quota, key: route, rule: { policy: sliding_window_log, limit: ${QUOTA}, windowMs: 3600000 } }] }
instances: 2
`,
  );
  const process = new SluiceProcess(setup.file, setup.adminUrl);
  await process.logged('sluice gateway listening');
  return { process, url: `${setup.gateway}/orders`, agent: new Agent({ connections: 4 }), dir: setup.dir };
}

const modeOf = async (gateway: Gateway): Promise<string> => (await gateway.process.admin('GET', '/readyz')).body?.engine?.mode ?? 'unknown';

/** Runs the scenario; stops what it started. */
export async function quotaThroughGateways(topology: GatewayTopology): Promise<GatewaysOutcome> {
  const upstream = await startUpstream();
  const gateways: Gateway[] = [];
  const statuses: number[] = [];
  const send = async (gateway: Gateway) => {
    const res = await request(gateway.url, { dispatcher: gateway.agent });
    await res.body.text();
    statuses.push(res.statusCode);
  };
  const spend = async (n: number) => {
    for (let i = 0; i < n; i += 2) await Promise.all(gateways.map(send));
  };
  try {
    gateways.push(await startGateway(topology, upstream.url), await startGateway(topology, upstream.url));
    await eventually(async () => (await Promise.all(gateways.map(modeOf))).every((mode) => mode === 'redis'), 30_000, 'both gateways on Redis');
    await spend(REPLICATED);
    await holdReplication(topology.masterPort, () => topology.pauseReplica(), topology.hashTag);
    await spend(LOST);
    assert.equal(statuses.filter((s) => s === 200).length, REPLICATED + LOST, 'all of it admitted before the kill');
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
    await eventually(async () => (await Promise.all(gateways.map(modeOf))).every((mode) => mode === 'redis'), 30_000, 'both gateways back on Redis');
    const afterBack = statuses.length;
    // As long again after, and 2× the quota offered in all.
    const enough = Math.max(afterBack + 2 * (QUOTA - REPLICATED - LOST), 2 * QUOTA);
    await eventually(() => statuses.length >= enough, 60_000, 'load after the failover');
    running = false;
    await flow;
    return {
      offered: statuses.length,
      admitted: statuses.filter((s) => s >= 200 && s < 300).length,
      refused: statuses.filter((s) => s === 429).length,
      modes: await Promise.all(gateways.map(modeOf)),
    };
  } finally {
    for (const gateway of gateways) {
      gateway.process.kill();
      await gateway.agent.close();
      rmSync(gateway.dir, { recursive: true, force: true });
    }
    await upstream.close();
  }
}

/** What both topologies' tests assert of the outcome: only 2xx and 429, 2× the quota offered, 2xx within the bound, both gateways back on Redis. */
export function assertWithinBound(outcome: GatewaysOutcome): void {
  assert.equal(outcome.admitted + outcome.refused, outcome.offered, 'every answer a 2xx or a 429');
  assert.ok(outcome.offered >= 2 * QUOTA, `${outcome.offered} requests offered, 2× the quota`);
  assert.ok(outcome.admitted <= BOUND, `admitted ${outcome.admitted} of a quota of ${QUOTA} (bound ${BOUND})`);
  assert.deepEqual(outcome.modes, ['redis', 'redis'], 'both gateways on Redis after the failover');
}
