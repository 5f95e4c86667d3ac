// The history's storage on a real redis-server: two instances' counts add up
// exactly, every key expires, a bucket holds at most MAX_HISTORY_ROUTES routes
// however many are sent, and the in-process history (memory store) stays
// bounded as time passes. Figures of its memory go to docs/dashboard.md.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { addRequest, CELL_LENGTH, emptyCell, latenciesOf } from '../../src/dashboard/history-cells.js';
import { LocalHistory } from '../../src/dashboard/history-local.js';
import { HistoryRecorder } from '../../src/dashboard/history-recorder.js';
import { appliedKey, EVENTS_KEY, HISTORY_PREFIX, historyKey, RedisHistory } from '../../src/dashboard/history-redis.js';
import { MAX_EVENTS, MAX_HISTORY_ROUTES, ONE_MINUTE, OTHER_HISTORY_ROUTE, TEN_SECONDS } from '../../src/dashboard/history-store.js';
import { historyView } from '../../src/dashboard/history-view.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const silent = pino({ level: 'silent' });

describe('dashboard history storage', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('two instances add up exactly; p99 and the status classes are those of all requests', async () => {
    const now = 1_800_000_000_000;
    const clients = [redis.client(), redis.client()];
    const [a, b] = clients.map((client, i) => new HistoryRecorder(new RedisHistory(client), `inst-${i}`, silent, () => now));
    for (let i = 0; i < 7; i++) a!.request('orders', 0, 200, 3, 0.3);
    a!.request('orders', 1, 429, 1, 0.2);
    for (let i = 0; i < 5; i++) b!.request('orders', 0, 200, 400, 0.4); // a slow upstream behind B
    b!.request('orders', 0, 502, 20, 0.4);
    b!.request('orders', 2, 200, 3, 0.3);
    a!.event('rule-change', 'rule t/orders');
    await Promise.all([a!.flush(), b!.flush()]);
    const view = await historyView(a!.store, '5m', now);
    const totals = view.routes.orders!.totals;
    assert.deepEqual([totals.allowed, totals.refused, totals.shadow], [13, 1, 1]);
    assert.deepEqual([totals.s2xx, totals.s429, totals.s502_504, totals.s4xx, totals.s5xx], [13, 1, 1, 0, 0]);
    // 15 requests, 5 of them between 250 and 500 ms: p99 is in the 500 ms bucket, p50 in the 5 ms one.
    assert.deepEqual([view.routes.orders!.totalLatency.requestP50, view.routes.orders!.totalLatency.requestP99], [5, 500]);
    assert.equal(view.routes.orders!.counts.allowed!.at(-1), 13, 'in the bucket of now');
    assert.deepEqual(view.events.map((e) => [e.kind, e.instance, e.detail]), [['rule-change', 'inst-0', 'rule t/orders']]);
    const day = await historyView(a!.store, '1d', now);
    assert.equal(day.routes.orders!.totals.allowed, 13, 'the same counts in the minute buckets');
    for (const client of clients) client.disconnect();
  });

  it('every key expires with its resolution; routes per bucket and events are capped (asserted on Redis itself)', async () => {
    const client = redis.client();
    await client.flushall();
    const store = new RedisHistory(client);
    const cell = emptyCell();
    addRequest(cell, 0, 200, 3, 0.3);
    const start = 1_800_000_000;
    for (let round = 0; round < 3; round++) {
      const routes = new Map(Array.from({ length: 50 }, (_, i) => [`route-{${round}}:${i}`, [...cell]]));
      await store.add({ instance: 'inst-{x}', seq: round, start, cells: routes });
    }
    await store.add({ instance: 'inst-{x}', seq: 1, start, cells: new Map([['late', [...cell]]]) }); // a batch sent twice
    const keys = (await client.keys(`${HISTORY_PREFIX}*`)).filter((key) => key !== appliedKey('inst-{x}'));
    assert.deepEqual(keys.sort(), [historyKey(ONE_MINUTE, start - (start % 60)), historyKey(TEN_SECONDS, start)].sort());
    assert.ok((await client.pttl(appliedKey('inst-{x}'))) > 0);
    assert.equal(await client.hget(historyKey(TEN_SECONDS, start), 'late'), null, 'a batch number seen already is not added again');
    for (const key of keys) {
      assert.equal(await client.hlen(key), MAX_HISTORY_ROUTES + 1, '64 routes and (other)');
      const ttl = await client.pttl(key);
      const keep = key.includes(':10s:') ? TEN_SECONDS.keepSeconds : ONE_MINUTE.keepSeconds;
      assert.ok(ttl > (keep - 60) * 1000 && ttl <= (keep + 60) * 1000, `${key}: ttl ${ttl}`);
    }
    const other = (await client.hget(historyKey(TEN_SECONDS, start), OTHER_HISTORY_ROUTE)) ?? '';
    assert.equal(Number(other.split(',')[0]), 150 - MAX_HISTORY_ROUTES, 'the routes past the cap add up under (other)');
    const events = Array.from({ length: MAX_EVENTS + 50 }, (_, i) => ({ at: i, kind: 'rule-change' as const, instance: 'x' }));
    await store.pushEvents(events);
    assert.equal(await client.llen(EVENTS_KEY), MAX_EVENTS);
    assert.ok((await client.pttl(EVENTS_KEY)) > 0);
    const usage = await client.memory('USAGE', historyKey(TEN_SECONDS, start));
    console.log(`one 10-s bucket of ${MAX_HISTORY_ROUTES + 1} routes with 1 latency bucket each: ${usage} bytes`);
    client.disconnect();
  });

  it('the in-process history (memory store) holds at most an hour of 10-s buckets and a day of minutes', async () => {
    let now = 1_800_000_000_000;
    const store = new LocalHistory(() => now);
    const cell = emptyCell();
    addRequest(cell, 0, 200, 3, 0.3);
    for (let i = 0; i < 2 * 8_640 + 5; i++) {
      now += 10_000;
      await store.add({ instance: 'i', seq: i, start: Math.floor(now / 1000), cells: new Map([['r', [...cell]]]) });
    }
    const size = store.size();
    assert.ok(size.tenSeconds <= 361, `10-s buckets: ${size.tenSeconds}`);
    assert.ok(size.minutes <= 1_441, `minute buckets: ${size.minutes}`);
    assert.equal((await historyView(store, '1h', now)).scope, 'local');
  });

  it('a write that timed out while Redis was paused is counted once, not twice, when Redis comes back', async () => {
    const client = redis.client();
    await client.flushall();
    const now = 1_800_000_000_000;
    const recorder = new HistoryRecorder(new RedisHistory(client), 'inst', silent, () => now);
    recorder.request('r', 0, 200, 1, 0.1);
    redis.pause();
    await recorder.flush();
    redis.resume();
    recorder.request('r', 0, 200, 1, 0.1);
    await recorder.flush();
    assert.equal((await historyView(recorder.store, '5m', now)).routes.r!.totals.allowed, 2);
    client.disconnect();
  });

  it('quantiles come from the bucket edges; an empty cell has none', () => {
    assert.deepEqual(latenciesOf(emptyCell()), {});
    assert.equal(emptyCell().length, CELL_LENGTH);
  });
});
