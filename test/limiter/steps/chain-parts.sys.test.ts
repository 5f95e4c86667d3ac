// The parts of the decision chain, each built alone: the deadline on a manual
// clock (it fires only when the clock says the connection was silent long
// enough), and the fallback with the guard over a real, paused redis-server
// (one store-down path for decide, peek and lease). Each step over a stub
// next: steps.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { CallDeadlines, DeadlineError, DeadlineTimer } from '../../../src/limiter/deadline/deadline.js';
import { planFor } from '../../../src/limiter/engine/plan.js';
import { buildChain } from '../../../src/limiter/engine/resilient-engine.js';
import { InstanceCount } from '../../../src/limiter/fallback/instances.js';
import { systemClock } from '../../../src/stores/clock.js';
import { RedisStore } from '../../../src/stores/redis-store.js';
import type { StoreConnection } from '../../../src/stores/store.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { bucket, decideOn, silent } from '../../helpers/resilient-engine.js';

/**
 * A timer on the manual clock that never finds this process busy: on a loaded
 * machine a real timer fires late, and a late timer counts the silence from
 * then, so a clock that does not move would keep the call pending forever.
 */
const onManualClock = (now: () => number) => new DeadlineTimer(now, () => 0);
/** A test that would wait on a call forever fails instead. */
const bounded = { timeout: 10_000 };

/** Whether `promise` has settled, without waiting for it. */
async function state(promise: Promise<unknown>): Promise<'pending' | 'resolved' | 'rejected'> {
  const pending = Symbol('pending');
  try {
    return (await Promise.race([promise, Promise.resolve().then(() => pending)])) === pending ? 'pending' : 'resolved';
  } catch {
    return 'rejected';
  }
}

test('deadline: on a manual clock a silent call fails only once the clock passes the deadline, and bytes arriving move it', bounded, async () => {
  let now = 1_000;
  let lastData = Number.NEGATIVE_INFINITY;
  const connection: StoreConnection = { channelOf: () => '*', lastDataAt: () => lastData, lost: () => false };
  const call = new CallDeadlines(connection, '*', 5, { now: () => now, timer: onManualClock(() => now) }).bound(new Promise<never>(() => undefined), 5);
  call.catch(() => undefined);
  await sleep(30); // the timer fired: the clock has not moved, so the call waits on
  assert.equal(await state(call), 'pending');
  now += 4;
  lastData = now; // bytes arrived 4 ms in: the silence starts again
  now += 2;
  await sleep(30);
  assert.equal(await state(call), 'pending', 'the connection spoke within the last 5 ms');
  now += 5;
  await sleep(30);
  await assert.rejects(call, DeadlineError);
});

test("deadline: a call's two deadlines share one timer; the request's rejects first, the breaker's waits for its own silence", bounded, async () => {
  let now = 1_000;
  const connection: StoreConnection = { channelOf: () => '*', lastDataAt: () => Number.NEGATIVE_INFINITY, lost: () => false };
  const deadlines = new CallDeadlines(connection, '*', 5, { now: () => now, timer: onManualClock(() => now) });
  const never = new Promise<never>(() => undefined);
  const forBreaker = deadlines.bound(never, 20);
  const forRequest = deadlines.bound(never, 5);
  forBreaker.catch(() => undefined);
  forRequest.catch(() => undefined);
  now += 5;
  await sleep(30);
  await assert.rejects(forRequest, DeadlineError);
  assert.equal(await state(forBreaker), 'pending', 'silent for 5 ms, not 20');
  now += 15;
  await sleep(40); // the timer was re-armed for the breaker's 15 ms left
  await assert.rejects(forBreaker, DeadlineError);
});

test('deadline: the calls of one guard share a timer; a shorter deadline after a longer one is judged at its own time', bounded, async () => {
  let now = 1_000;
  const connection: StoreConnection = { channelOf: () => '*', lastDataAt: () => Number.NEGATIVE_INFINITY, lost: () => false };
  const timer = onManualClock(() => now);
  const never = new Promise<never>(() => undefined);
  const long = new CallDeadlines(connection, '*', 200, { now: () => now, timer }).bound(never, 200);
  const answered = new CallDeadlines(connection, '*', 5, { now: () => now, timer }).bound(Promise.resolve('ok'), 5);
  const short = new CallDeadlines(connection, '*', 5, { now: () => now, timer }).bound(never, 5);
  long.catch(() => undefined);
  short.catch(() => undefined);
  assert.equal(await answered, 'ok');
  now += 5;
  await sleep(40); // the timer armed for 200 ms was re-armed for the 5 ms call
  await assert.rejects(short, DeadlineError);
  assert.equal(await state(long), 'pending');
  now += 195;
  await sleep(260);
  await assert.rejects(long, DeadlineError);
});

test('deadline: a timer that fires late (this process was busy, its calls not yet sent) judges the silence from then, once', bounded, async () => {
  let now = 1_000;
  const connection: StoreConnection = { channelOf: () => '*', lastDataAt: () => Number.NEGATIVE_INFINITY, lost: () => false };
  const call = new CallDeadlines(connection, '*', 5, { now: () => now }).bound(new Promise<never>(() => undefined), 5);
  call.catch(() => undefined);
  // The event loop blocked for 30 ms (a burst of calls issued in one turn): the timer due at 1,005 runs at 1,030.
  const until = performance.now() + 30;
  while (performance.now() < until);
  now += 30;
  await sleep(40);
  assert.equal(await state(call), 'pending', 'Redis was not silent for 5 ms of a free event loop');
  now += 5;
  await sleep(40);
  await assert.rejects(call, DeadlineError, 'then silent for a whole deadline: rejected');
});

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.stop();
});

test('fallback and guard over a paused Redis: decide, peek and lease take one store-down path by onStoreDown', async () => {
  const store = new RedisStore(redis.client(), { connectGraceMs: 0 });
  const chain = buildChain({
    store,
    deadlineMs: 20,
    breaker: { failureThreshold: 1000, errorThresholdPercentage: 100, volumeThreshold: 1000, rollingWindowMs: 1000, resetTimeoutMs: 500, silenceMs: 20 },
    hotKey: { autoLeaseRatePerSec: 0, batch: 10, leaseTtlMs: 1000 },
    negativeCacheSize: 100,
    stateCacheSize: 100,
    fallbackMaxKeys: 100,
    adminTimeoutMs: 1000,
    instances: new InstanceCount(2, { count: 1 }),
    logger: silent,
    now: systemClock,
  });
  const closed = planFor({ tag: 'shop', name: 'closed' }, bucket(10, 10, { onStoreDown: 'closed' }), 1);
  const open = planFor({ tag: 'shop', name: 'open' }, bucket(10, 10, { onStoreDown: 'open' }), 1);
  const local = planFor({ tag: 'shop', name: 'local' }, bucket(10, 10, { lease: { batch: 4 } }), 1);
  try {
    assert.equal((await decideOn(chain, local, 1)).source, 'cache', 'Redis up: a lease, then a unit spent locally');
    redis.pause();
    assert.equal((await decideOn(chain, closed, 1)).source, 'closed');
    assert.equal((await chain.storeDown.peek(closed)).source, 'closed');
    assert.equal((await decideOn(chain, open, 1)).source, 'open');
    assert.equal((await chain.storeDown.peek(open)).source, 'open');
    const spent = await Promise.all(Array.from({ length: 3 }, () => decideOn(chain, local, 1)));
    assert.deepEqual(spent.map((d) => d.source), ['cache', 'cache', 'cache'], 'leased units are spent without Redis');
    const down = await decideOn(chain, local, 1);
    assert.equal(down.source, 'fallback', 'a lease that cannot reach Redis: the fallback decides');
    assert.equal(down.limit, 5, "this instance's half of the limit");
    assert.equal(chain.stats.deadlineTimeouts, 5, 'every failed call counted once');
  } finally {
    redis.resume();
    chain.breaker.shutdown();
    await chain.fallback.close();
    await store.close();
  }
});
