// What a Sentinel failover costs through two real gateways over HTTP: the
// scenario of gateway-failover-scenario.ts (two `sluice start` processes, a
// quota of 600 an hour, 2× it offered, writes lost for real, the master
// killed). The 2xx answers stay within the published bound
// (docs/resilience.md), and both gateways are back on Redis after.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MASTER_NAME, type SentinelSetup, startSentinels } from '../helpers/redis-sentinel.js';
import { BOUND, QUOTA } from './failover-scenario.js';
import { quotaThroughGateways } from './gateway-failover-scenario.js';

let setup: SentinelSetup;
before(async () => {
  setup = await startSentinels();
});
after(async () => {
  await setup?.stop();
});

test('a quota across a Sentinel failover through two gateways over HTTP: 2xx within the quota plus the lost writes plus the margin, both back on Redis', async (t) => {
  const oldMaster = setup.master.port;
  const outcome = await quotaThroughGateways({
    storeYaml: `{ sentinel: { name: ${MASTER_NAME}, sentinels: [${setup.sentinels.join(', ')}] } }`,
    masterPort: oldMaster,
    hashTag: 'failover',
    pauseReplica: () => setup.replica.pause(),
    resumeReplica: () => setup.replica.resume(),
    killMaster: () => setup.master.kill(),
    waitForPromotion: async () => {
      await setup.waitForPromotion(oldMaster);
    },
  });
  t.diagnostic(JSON.stringify(outcome));
  assert.equal(outcome.admitted + outcome.refused, outcome.offered, 'every answer a 2xx or a 429');
  assert.ok(outcome.offered >= 2 * QUOTA, `${outcome.offered} requests offered, 2× the quota`);
  assert.ok(outcome.admitted <= BOUND, `admitted ${outcome.admitted} of a quota of ${QUOTA} (bound ${BOUND})`);
  assert.deepEqual(outcome.modes, ['redis', 'redis'], 'both gateways on Redis after the failover');
});
