// A limit with its penalty box in one script on a real redis-server
// (penalized.lua) agrees with the model (penalized.ts) on the shared vectors,
// and a blocked request costs exactly one Redis command.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { bucketKey } from '../../src/core/ids.js';
import { parseRule } from '../../src/policies/rule.js';
import { toMicros } from '../../src/policies/model.js';
import { parsePenalty } from '../../src/policies/penalty/config.js';
import type { PenaltyState } from '../../src/policies/penalty/model.js';
import { stepPenalized } from '../../src/policies/penalty/penalized.js';
import { PENALTY_INDEX, PENALTY_INDEX_MAX, penaltyKeyOf, runPenalized } from '../../src/stores/redis/penalty-script.js';
import { redisKeyOf } from '../../src/stores/redis/scripts.js';
import { RedisStore } from '../../src/stores/redis-store.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { PENALIZED_VECTORS } from './penalty-vectors.js';

const T0 = 1_700_000_000_000;
let redis: RedisServer;
let client: Redis;
let seq = 0;

before(async () => {
  redis = await startRedis();
  client = redis.client();
});
after(async () => {
  client.disconnect();
  await redis.stop();
});

/** Counts the commands `client` sends (a script's own calls inside Redis are not round trips). */
function countCommands(target: Redis): { readonly sent: number } {
  const counter = { sent: 0 };
  const send = target.sendCommand.bind(target);
  target.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    counter.sent++;
    return send(...args);
  }) as Redis['sendCommand'];
  return counter;
}

describe('a limit with a penalty box: model and one Lua script', () => {
  for (const vector of PENALIZED_VECTORS) {
    it(vector.name, async () => {
      const rule = parseRule(vector.rule);
      const penalty = parsePenalty(vector.penalty, 'penalty');
      const bucket = bucketKey(`pz${seq++}`, 'login');
      let policyState: unknown;
      let penaltyState: PenaltyState | undefined;
      for (const [i, step] of vector.steps.entries()) {
        const now = T0 + step.at;
        const model = stepPenalized({ policyState, penaltyState, now, rule, cost: step.cost, penalty });
        if (model.policy.write) policyState = model.policy.state;
        if (model.penalty.write) penaltyState = model.penalty.state;
        const { source, ...lua } = await runPenalized(client, { bucket, rule, cost: step.cost, penalty }, toMicros(now));
        // Redis expires on its real clock; the vectors run on a simulated one.
        await Promise.all([client.persist(redisKeyOf(rule.policy, bucket)), client.persist(penaltyKeyOf(bucket))]);
        assert.equal(source, 'redis');
        assert.deepEqual(lua, model.decision, `step ${i} at ${step.at}`);
        assert.equal(lua.allowed, step.expect.allowed, `allowed at step ${i}`);
      }
    });
  }

  it('a blocked key costs one Redis command and charges its bucket nothing', async () => {
    const own = redis.client();
    const store = new RedisStore(own);
    await own.ping();
    const rule = parseRule({ policy: 'fixed_window', limit: 1, windowMs: 60000 });
    const penalty = parsePenalty({ after: 1, withinMs: 60000, blockMs: 600000 }, 'penalty');
    const bucket = bucketKey('pz-count', 'login');
    assert.equal((await store.consumePenalized(bucket, rule, 1, penalty)).allowed, true);
    const refused = await store.consumePenalized(bucket, rule, 1, penalty);
    assert.equal(refused.allowed, false);
    assert.ok(refused.blockedUntilMs! > Date.now() + 590_000, 'the refusal starts the block');
    const bucketBefore = await client.hget(bucket.hash, bucket.field);
    const counter = countCommands(own);
    const blocked = await store.consumePenalized(bucket, rule, 1, penalty);
    const used = counter.sent;
    assert.equal(blocked.allowed, false);
    assert.ok(blocked.retryAfterMs > 590_000 && blocked.retryAfterMs <= 600_000, `retryAfterMs ${blocked.retryAfterMs}`);
    assert.equal(used, 1, 'commands for a blocked decision');
    assert.equal(await client.hget(bucket.hash, bucket.field), bucketBefore);
    await store.close();
  });
});

describe('blocked keys: the bounded index, list and lift', () => {
  it('lists a running block with its end, drops it once lifted, and the key is let in again', async () => {
    const store = new RedisStore(redis.client());
    after(() => store.close());
    const rule = parseRule({ policy: 'fixed_window', limit: 1, windowMs: 60000 });
    const penalty = parsePenalty({ after: 1, withinMs: 60000, blockMs: 600000 }, 'penalty');
    const bucket = bucketKey('pz-list', 'login');
    await store.consumePenalized(bucket, rule, 1, penalty);
    const started = await store.consumePenalized(bucket, rule, 1, penalty);
    const listed = (await store.listBlocked()).find((entry) => entry.key === penaltyKeyOf(bucket));
    assert.equal(listed?.blockedUntilMs, started.blockedUntilMs);
    assert.ok((await client.pttl(PENALTY_INDEX)) > 590_000, 'the index expires with its last block');
    assert.equal(await store.liftBlock(penaltyKeyOf(bucket)), true);
    assert.equal((await store.listBlocked()).some((entry) => entry.key === penaltyKeyOf(bucket)), false);
    const again = await store.consumePenalized(bucket, rule, 1, penalty);
    assert.ok(again.blockedUntilMs !== undefined && again.retryAfterMs > 590_000 && again.retryAfterMs <= 600_000, 'refused by the limit, a new first block (level forgiven)');
    await assert.rejects(store.liftBlock('rl:{pz-list}'), /key: must be a penalty key/);
  });

  it('keeps at most PENALTY_INDEX_MAX entries, the blocks ending last', async () => {
    const pipeline = client.pipeline();
    for (let i = 0; i < PENALTY_INDEX_MAX + 5; i++) pipeline.zadd(PENALTY_INDEX, Date.now() + 1_000_000 + i, `pb:{fill${i}}:x`);
    await pipeline.exec();
    const rule = parseRule({ policy: 'fixed_window', limit: 1, windowMs: 60000 });
    const penalty = parsePenalty({ after: 1, withinMs: 60000, blockMs: 600000 }, 'penalty');
    const bucket = bucketKey('pz-bound', 'login');
    await runPenalized(client, { bucket, rule, cost: 1, penalty });
    await runPenalized(client, { bucket, rule, cost: 1, penalty });
    assert.equal(await client.zcard(PENALTY_INDEX), PENALTY_INDEX_MAX);
    assert.equal(await client.zscore(PENALTY_INDEX, 'pb:{fill0}:x'), null);
  });
});
