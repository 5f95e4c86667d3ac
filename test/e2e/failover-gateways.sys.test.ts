// What a Sentinel failover costs through two real gateways over HTTP: the
// scenario of gateway-failover-scenario.ts (two `sluice start` processes, a
// quota of 600 an hour, 2× it offered, writes lost for real, the master
// killed). The 2xx answers stay within the published bound
// (docs/resilience.md), and both gateways are back on Redis after.
import { after, before, test } from 'node:test';
import { MASTER_NAME, type SentinelSetup, startSentinels } from '../helpers/redis-sentinel.js';
import { sentinelFailover } from './failover-scenario.js';
import { assertWithinBound, quotaThroughGateways } from './gateway-failover-scenario.js';

let setup: SentinelSetup;
before(async () => {
  setup = await startSentinels();
});
after(async () => {
  await setup?.stop();
});

test('a quota across a Sentinel failover through two gateways over HTTP: 2xx within the quota plus the lost writes plus the margin, both back on Redis', async (t) => {
  const outcome = await quotaThroughGateways({
    ...sentinelFailover(setup),
    storeYaml: `{ sentinel: { name: ${MASTER_NAME}, sentinels: [${setup.sentinels.join(', ')}] } }`,
    hashTag: 'failover',
  });
  t.diagnostic(JSON.stringify(outcome));
  assertWithinBound(outcome);
});
