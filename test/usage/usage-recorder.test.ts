// Each tenant's consumption, gathered from the gateway's decisions and kept in
// this process's history (the memory store's), with a manual clock: which
// limits count, what counts (units, requests, refusals), the hour and day
// windows, a batch sent again after a failure applied once, and the bounds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { Decision } from '../../src/core/decision.js';
import type { LimitsDecision } from '../../src/limiter/engine/engine.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import type { RequestLimit } from '../../src/request-limits/types.js';
import { LocalUsageHistory, type UsageBatch, type UsageHistory } from '../../src/usage/usage-history.js';
import { MAX_PENDING_TENANTS, UsageRecorder } from '../../src/usage/usage-recorder.js';

const RULE = { policy: 'token_bucket', capacity: 10, refillPerSecond: 1 } as RequestLimit['rule'];
const quiet = pino({ level: 'silent' });
const limitOf = (limitId: string, tag: string, cost = 1): RequestLimit => ({ limitId, bucket: { tag, name: limitId }, rule: RULE, cost });
const decision = (allowed: boolean): Decision => ({ allowed, remaining: 0, limit: 10, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'memory' });
const outcome = (...allowed: boolean[]): LimitsDecision => ({ allowed: allowed.every(Boolean), decisions: allowed.map(decision), governing: 0 });

function recorderAt(start: number, history: UsageHistory = new LocalUsageHistory()) {
  const clock = { now: start };
  const recorder = new UsageRecorder(history, 'instance-1', quiet, () => clock.now);
  return { clock, recorder, history };
}

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 11, 6, 10, 2, 0);

describe('UsageRecorder', () => {
  it("counts the tenant's own buckets only: units and requests admitted, refusals on the refusing limit", async () => {
    const { clock, recorder, history } = recorderAt(T0);
    const limits = [limitOf('per-tenant', 'shop-a', 3), limitOf('per-ip', '~ip.192.0.2.1'), limitOf('day', 'shop-a')];
    recorder.decided('shop-a', limits, outcome(true, true, true));
    recorder.decided('shop-a', limits, outcome(true, true, true));
    recorder.decided('shop-a', limits, outcome(true, false, true)); // refused by the ip limit: nothing charged, no refusal of the tenant's
    recorder.decided('shop-a', limits, outcome(false, true, true)); // refused by per-tenant
    recorder.decided(undefined, limits, outcome(true, true, true)); // an anonymous route: no tenant
    recorder.decided('shop-b', limits, outcome(true, true, true)); // tags name shop-a: not shop-b's buckets
    await recorder.flush();
    const read = await history.read('shop-a', clock.now / 1000);
    assert.deepEqual(read.lastHour.get('per-tenant'), { units: 6, requests: 2, refused: 1 });
    assert.deepEqual(read.lastHour.get('day'), { units: 2, requests: 2, refused: 0 });
    assert.equal(read.lastHour.has('per-ip'), false, "an address's bucket is not the tenant's");
    assert.deepEqual(read.lastDay.get('per-tenant'), { units: 6, requests: 2, refused: 1 });
    assert.equal((await history.read('shop-b', clock.now / 1000)).lastDay.size, 0);
    await recorder.close();
  });

  it("a usage-priced limit's settle moves its units by what the response said, not its requests", async () => {
    const { clock, recorder, history } = recorderAt(T0);
    const tokens = limitOf('tokens', 'shop-a', 1000); // the estimate reserved
    recorder.decided('shop-a', [tokens], outcome(true));
    recorder.settled('shop-a', tokens, -700); // the answer used 300
    recorder.settled('shop-b', tokens, 50); // not shop-b's bucket
    await recorder.flush();
    assert.deepEqual((await history.read('shop-a', clock.now / 1000)).lastHour.get('tokens'), { units: 300, requests: 1, refused: 0 });
    await recorder.close();
  });

  it('a limit the negative cache did not consult counts nothing', async () => {
    const { clock, recorder, history } = recorderAt(T0);
    const limits = [limitOf('a', 'shop-a'), limitOf('b', 'shop-a')];
    recorder.decided('shop-a', limits, { ...outcome(false, true), consulted: [true, false] });
    await recorder.flush();
    const read = await history.read('shop-a', clock.now / 1000);
    assert.deepEqual(read.lastHour.get('a'), { units: 0, requests: 0, refused: 1 });
    assert.equal(read.lastHour.has('b'), false);
    await recorder.close();
  });

  it('the last hour drops what is older than its twelve 5-minute buckets; the last day keeps it for 24 hours', async () => {
    const { clock, recorder, history } = recorderAt(T0);
    const limits = [limitOf('per-tenant', 'shop-a')];
    recorder.decided('shop-a', limits, outcome(true));
    await recorder.flush();
    clock.now = T0 + 2 * HOUR;
    recorder.decided('shop-a', limits, outcome(true));
    recorder.decided('shop-a', limits, outcome(true));
    await recorder.flush();
    let read = await history.read('shop-a', clock.now / 1000);
    assert.equal(read.lastHour.get('per-tenant')?.requests, 2, 'two hours ago is not in the last hour');
    assert.equal(read.lastDay.get('per-tenant')?.requests, 3, 'but is in the last day');
    read = await history.read('shop-a', (T0 + 25 * HOUR) / 1000);
    assert.equal(read.lastDay.get('per-tenant')?.requests, 2, "25 hours on, the first request has left the day, the two of T0 + 2 h have not");
    read = await history.read('shop-a', (T0 + 27 * HOUR) / 1000);
    assert.equal(read.lastDay.get('per-tenant'), undefined, 'a day after the last, nothing is left');
    await recorder.close();
  });

  it('a batch the store failed is sent again with the next flush and applied once', async () => {
    const local = new LocalUsageHistory();
    const applied = new Set<string>();
    let failNext = true;
    const flaky: UsageHistory = {
      scope: 'local',
      async add(batch: UsageBatch) {
        // Like the Redis script: applied, then the answer lost; the number makes the second send a no-op.
        const id = `${batch.instance}:${batch.seq}`;
        if (!applied.has(id)) {
          applied.add(id);
          await local.add(batch);
        }
        if (failNext) {
          failNext = false;
          throw new Error('timed out');
        }
      },
      read: (tenant, now) => local.read(tenant, now),
    };
    const { clock, recorder } = recorderAt(T0, flaky);
    recorder.decided('shop-a', [limitOf('per-tenant', 'shop-a')], outcome(true));
    await recorder.flush();
    await recorder.flush();
    assert.equal(applied.size, 1, 'the same batch number both times');
    assert.equal((await local.read('shop-a', clock.now / 1000)).lastHour.get('per-tenant')?.requests, 1);
    await recorder.close();
  });

  it('tenants past the pending bound between two flushes, and ids that are no ids, are dropped and counted', async () => {
    const { recorder } = recorderAt(T0);
    const metric = async () => ((await resilienceRegistry.getSingleMetric('sluice_usage_dropped_total')?.get())?.values ?? []).find((value) => value.labels.reason === 'tenants')?.value ?? 0;
    const before = await metric();
    for (let i = 0; i <= MAX_PENDING_TENANTS; i++) recorder.decided(`t${i}`, [limitOf('per-tenant', `t${i}`)], outcome(true));
    recorder.decided('bad{id}', [limitOf('per-tenant', 'bad{id}')], outcome(true));
    assert.equal(await metric(), before + 2);
    await recorder.close();
  });
});
