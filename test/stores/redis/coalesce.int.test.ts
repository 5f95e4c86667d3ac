// Write coalescing on a real redis-server: an idle connection sends at once,
// a busy one shares socket writes within a loop turn, and every decision is still decided exactly.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { bucketKey } from '../../../src/core/ids.js';
import { parseRule } from '../../../src/policies/rule.js';
import { BATCH } from '../../../src/stores/redis/coalesce.js';
import { RedisStore } from '../../../src/stores/redis-store.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';

async function readsProcessed(admin: Redis): Promise<number> {
  const stats = await admin.info('stats');
  return Number(/total_reads_processed:(\d+)/.exec(stats)![1]);
}

describe('write coalescing', () => {
  let server: RedisServer;
  let client: Redis;
  let admin: Redis;
  let store: RedisStore;
  const rule = parseRule({ policy: 'token_bucket', capacity: 200, refillPerSecond: 0.001 });

  before(async () => {
    server = await startRedis();
    client = server.client();
    admin = server.client();
    store = new RedisStore(client);
    await store.consume(bucketKey('warm', 'up'), rule, 1); // connected, script loaded
  });
  after(async () => {
    await store.close();
    admin.disconnect();
    await server.stop();
  });

  it('a decision on an idle connection leaves at once, not at the end of the loop turn', async () => {
    const decision = store.consume(bucketKey('idle', 'r'), rule, 1);
    assert.equal(client.stream.writableCorked, 0, 'nothing held back');
    assert.equal((await decision).allowed, true);
  });

  it('while replies are pending, decisions are held and leave together after BATCH commands or at the end of the loop turn', async () => {
    const first = store.consume(bucketKey('busy', 'r'), rule, 1); // in flight: the connection is busy now
    const held = [store.consume(bucketKey('busy', 'r'), rule, 1)];
    assert.equal(client.stream.writableCorked, 1, 'the second decision waits for company');
    while (held.length < BATCH) held.push(store.consume(bucketKey('busy', 'r'), rule, 1));
    assert.equal(client.stream.writableCorked, 0, 'a full batch left at once');
    held.push(store.consume(bucketKey('busy', 'r'), rule, 1));
    assert.equal(client.stream.writableCorked, 1);
    await new Promise<void>((resolve) => process.nextTick(resolve));
    assert.equal(client.stream.writableCorked, 1, 'still held at the end of the tick: more may come this turn');
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(client.stream.writableCorked, 0, 'the rest left at the end of the loop turn');
    const decisions = await Promise.all([first, ...held]);
    assert.equal(decisions.filter((d) => d.allowed).length, BATCH + 2);
  });

  it('1,000 concurrent decisions reach Redis in far fewer reads, and exactly the capacity is allowed', async () => {
    const before = await readsProcessed(admin);
    const key = bucketKey('crowd', 'r');
    const decisions = await Promise.all(Array.from({ length: 1000 }, () => store.consume(key, rule, 1)));
    const reads = (await readsProcessed(admin)) - before;
    assert.equal(decisions.filter((d) => d.allowed).length, 200);
    assert.ok(reads < 1000 / 4, `${reads} socket reads in Redis for 1,000 decisions`);
  });

  it('commands issued outside the store in the same tick keep their order', async () => {
    const key = bucketKey('order', 'r');
    await store.consume(key, rule, 1);
    const busy = store.consume(key, rule, 1);
    const corked = store.consume(key, rule, 1); // held in a batch
    const reset = store.reset(key); // plain commands, written behind it
    const after = store.consume(key, rule, 200); // a full bucket again only if the reset came first
    await Promise.all([busy, corked, reset]);
    assert.equal((await after).allowed, true);
  });
});
