// What a failover costs, bounded, on Redis Sentinel (one master, one
// replica, three sentinels): the scenario of failover-scenario.ts. Without
// the bound, each instance's fallback starts from a whole 1/N of the quota
// and the promoted master lacks the lost writes: hundreds over (1,182 of
// 600). With it, the fallback holds each instance to its share of what Redis
// last said was left, so what the failover can add is the lost writes
// themselves (the promoted master's first word is also held to what the
// instances last saw, last-states.ts, which takes some or all of them back).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { connectRedis } from '../../src/stores/redis/connect.js';
import { MASTER_NAME, type SentinelSetup, startSentinels } from '../helpers/redis-sentinel.js';
import { BOUND, QUOTA, quotaAcrossFailover, sentinelFailover } from './failover-scenario.js';

let setup: SentinelSetup;
before(async () => {
  setup = await startSentinels();
});
after(async () => {
  await setup?.stop();
});

test('a quota across a Sentinel failover that loses the last writes: two instances admit at most the quota plus the lost writes, within a tenth of what was left', async () => {
  const outcome = await quotaAcrossFailover(
    { ...sentinelFailover(setup), client: () => connectRedis({ sentinel: { name: MASTER_NAME, sentinels: setup.sentinels } }) },
    'quota-fo',
  );
  assert.ok(outcome.admitted <= BOUND, `admitted ${outcome.admitted} of a quota of ${QUOTA} (bound ${BOUND}); lost writes restored: ${outcome.restored}`);
  assert.ok(outcome.fallbackAdmitted > 0, 'the fallback admitted during the failover');
});
