// A window policy while Redis is down: each instance's fallback is held to
// its share of what Redis last said was left, not a whole 1/N of the limit
// (src/limiter/fallback/last-states.ts). An hour's quota 60 of 100 spent, Redis
// killed: two instances admit 20 each, 40 in all, where a fresh 1/N would
// have let each admit 50. Then Redis restarted empty: the first word of the
// empty server is held to what the instances last saw (less the one unit
// the first did not see). Counts only.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Decision } from '../../../src/core/decision.js';
import { parseRule } from '../../../src/policies/rule.js';
import type { ResilientEngine } from '../../../src/limiter/engine/resilient-engine.js';
import type { Redis } from 'ioredis';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { allowedCount, eventually, resilientEngine } from '../../helpers/resilient-engine.js';

const quota = parseRule({ policy: 'sliding_window_log', limit: 100, windowMs: 3_600_000 });
let redis: RedisServer;
let clients: Redis[] = [];
let engines: ResilientEngine[] = [];
before(async () => {
  redis = await startRedis();
  clients = [redis.client(), redis.client()];
  for (const client of clients) client.on('error', () => undefined);
  engines = clients.map((client) => resilientEngine({ redis: client, instances: 2, breaker: { resetTimeoutMs: 200 } }));
});
after(async () => {
  await Promise.all(engines.map((engine) => engine.close()));
  for (const client of clients) client.disconnect();
  await redis.stop();
});

const each = async (n: number, route = 'orders'): Promise<Decision[][]> =>
  Promise.all(engines.map(async (engine) => {
    const decisions: Decision[] = [];
    for (let i = 0; i < n; i++) decisions.push(await engine.decide({ tag: 'quota', name: route }, quota));
    return decisions;
  }));

/** `n` decisions on each instance, taking turns one at a time: each instance's last word is then 41 and 40 left. */
async function alternate(n: number): Promise<Decision[][]> {
  const decisions: Decision[][] = engines.map(() => []);
  for (let i = 0; i < n; i++) for (const [k, engine] of engines.entries()) decisions[k]!.push(await engine.decide({ tag: 'quota', name: 'orders' }, quota));
  return decisions;
}

test("Redis killed with a quota 60 of 100 spent: each instance's fallback admits its half of the 40 left, not half of the 100", async () => {
  const spent = await alternate(30);
  assert.deepEqual(spent.map((d) => allowedCount(d)), [30, 30], 'all on Redis before the kill');
  await redis.kill();
  const down = await each(60);
  assert.ok(down.flat().every((d) => d.source === 'fallback' || !d.allowed), 'decided without Redis');
  assert.deepEqual(down.map((d) => allowedCount(d)), [20, 20]);
});

test('Redis restarted empty: the instances hold the new server to what they last saw, charging back what it forgot', async () => {
  await redis.restart();
  await eventually(async () => (await engines[0]!.decide({ tag: 'quota', name: 'probe' }, quota)).source === 'redis', 20_000, 'back on Redis');
  await eventually(async () => (await engines[1]!.decide({ tag: 'quota', name: 'probe' }, quota)).source === 'redis', 20_000, 'back on Redis');
  // The quota is spent: 60 on the old server, 40 by the fallback. The restarted server knows none of it.
  // Each instance holds it to its own last word (41 and 40 left): at most the one unit the first did not see is left.
  const after = await each(20);
  assert.ok(allowedCount(after.flat()) <= 1, `${allowedCount(after.flat())} admitted on the restarted server`);
  assert.ok(engines.reduce((sum, engine) => sum + engine.counters().restoredUnits + engine.counters().chargedUnits, 0) >= 100);
});
