// Redis Sentinel failing over under the engine the config builds: one master,
// one replica, three sentinels (test/helpers/redis-sentinel.ts). The master
// is killed; decisions keep coming (the fallback bridges), and once the
// sentinels promote the replica they are made on it. Counts, never milliseconds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { engineFromConfig } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import type { Decision } from '../../src/core/decision.js';
import { MASTER_NAME, type SentinelSetup, startSentinels } from '../helpers/redis-sentinel.js';
import { ROUTES } from '../helpers/connections.js';
import { bucket, eventually } from '../helpers/resilient-engine.js';

let setup: SentinelSetup;
before(async () => {
  setup = await startSentinels();
});
after(async () => {
  await setup?.stop();
});

test('the master killed, the replica promoted by the sentinels: decisions keep flowing, then land on the new master', async () => {
  const config = parseConfig(ROUTES, { env: { SLUICE_REDIS_SENTINELS: setup.sentinels.join(','), SLUICE_REDIS_SENTINEL_NAME: MASTER_NAME } });
  const engine = engineFromConfig(config, pino({ level: 'silent' }));
  try {
    assert.equal((await engine.decide({ tag: 'sentinel-fo', name: 'orders' }, bucket(20, 1))).source, 'redis');
    let running = true;
    const seen: Decision[] = [];
    const flow = (async () => {
      while (running) {
        seen.push(...(await Promise.all(Array.from({ length: 10 }, () => engine.decide({ tag: 'sentinel-fo', name: 'flow' }, bucket(100_000, 1000))))));
        await sleep(5);
      }
    })();
    const oldMaster = setup.master.port;
    await setup.master.kill();
    const newMaster = await setup.waitForPromotion(oldMaster);
    assert.equal(newMaster, setup.replica.port);
    await eventually(async () => (await engine.decide({ tag: 'sentinel-fo', name: 'after' }, bucket(20, 1))).source === 'redis', 20_000, 'decisions on the promoted replica');
    running = false;
    await flow; // rejects if any decision threw
    assert.ok(seen.some((d) => d.source === 'fallback'), 'the fallback decided during the failover');
    const promoted = setup.replica.client();
    try {
      assert.ok((await promoted.hkeys('rl:{sentinel-fo}')).includes('after'), 'the bucket is on the promoted replica');
    } finally {
      promoted.disconnect();
    }
  } finally {
    await engine.close();
  }
});
