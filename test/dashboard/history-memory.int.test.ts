// The history's memory bound (docs/dashboard.md#history), measured: a redis-server
// this test starts holds a full hour of 10-s buckets and a full day of minute
// buckets, each with MAX_HISTORY_ROUTES busy routes (every count non-zero, 4-5
// digits), written through RedisHistory's own script; `MEMORY USAGE` of every
// key, divided by the routes, is what one busy route costs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CELL_LENGTH, type Cell } from '../../src/dashboard/history-cells.js';
import { HISTORY_PREFIX, RedisHistory } from '../../src/dashboard/history-redis.js';
import { MAX_HISTORY_ROUTES, ONE_MINUTE, TEN_SECONDS } from '../../src/dashboard/history-store.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

/** The bound docs/dashboard.md states for one busy route kept for the hour and the day. */
const BUSY_ROUTE_BOUND_BYTES = 0.45 * 1024 * 1024;

/** A busy cell: every count set, 4-digit values (the minute buckets add six of them: 5 digits). */
function busyCell(seed: number): Cell {
  return Array.from({ length: CELL_LENGTH }, (_, i) => 1_000 + ((seed * 7 + i * 131) % 9_000));
}

describe('dashboard history memory in Redis', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('a busy route kept for the whole hour and day costs less than the documented bound', async () => {
    const client = redis.client();
    const store = new RedisHistory(client);
    // Routes named like a config's route ids (12 characters).
    const routes = Array.from({ length: MAX_HISTORY_ROUTES }, (_, i) => `route-${String(i).padStart(6, '0')}`);
    const batch = (seq: number, start: number) => ({ instance: 'inst', seq, start, cells: new Map(routes.map((route, i): [string, Cell] => [route, busyCell(seq + i)])) });
    const end = 1_800_000_000 - (1_800_000_000 % 60);
    const hourStart = end - TEN_SECONDS.keepSeconds;
    const dayStart = end - ONE_MINUTE.keepSeconds;
    let seq = 0;
    // The day before the last hour: one batch per minute fills each minute bucket.
    for (let minute = dayStart; minute < hourStart; minute += ONE_MINUTE.seconds) await store.add(batch(seq++, minute));
    // Those batches also wrote one 10-s bucket each, older than the hour: not kept in a live cluster.
    const stale = await client.keys(`${HISTORY_PREFIX}10s:*`);
    if (stale.length > 0) await client.del(...stale);
    // The last hour: every 10-s bucket, each adding to its minute.
    for (let start = hourStart; start < end; start += TEN_SECONDS.seconds) await store.add(batch(seq++, start));

    const tenSecondKeys = await client.keys(`${HISTORY_PREFIX}10s:*`);
    const minuteKeys = await client.keys(`${HISTORY_PREFIX}1m:*`);
    assert.equal(tenSecondKeys.length, TEN_SECONDS.keepSeconds / TEN_SECONDS.seconds, 'an hour of 10-s buckets');
    assert.equal(minuteKeys.length, ONE_MINUTE.keepSeconds / ONE_MINUTE.seconds, 'a day of minute buckets');
    const sample = await client.hget(minuteKeys[minuteKeys.length - 1]!, routes[0]!);
    assert.equal(sample?.split(',').length, CELL_LENGTH, 'every count of a busy cell is stored');

    let total = 0;
    for (const key of [...tenSecondKeys, ...minuteKeys]) total += Number(await client.memory('USAGE', key, 'SAMPLES', '0'));
    const perRoute = total / MAX_HISTORY_ROUTES;
    console.log(`history of ${MAX_HISTORY_ROUTES} busy routes for an hour and a day: ${(total / 1024 / 1024).toFixed(2)} MB, ${(perRoute / 1024 / 1024).toFixed(3)} MB per route`);
    assert.ok(perRoute < BUSY_ROUTE_BOUND_BYTES, `one busy route: ${perRoute} bytes, bound ${BUSY_ROUTE_BOUND_BYTES}`);
    assert.ok(perRoute > BUSY_ROUTE_BOUND_BYTES / 4, `one busy route: ${perRoute} bytes, more than a quarter of the bound (the cells were stored)`);
    client.disconnect();
  });
});
