// The penalty box's model (src/policies/penalty/model.ts) and its Lua twin on a
// real redis-server agree on the shared vectors and on random sequences: the
// same blocked/retry answers and the same stored state, step by step.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { bucketKey } from '../../src/core/ids.js';
import { parsePenalty } from '../../src/policies/penalty/config.js';
import { type PenaltyConfig, type PenaltyState, stepPenalty } from '../../src/policies/penalty/model.js';
import { toMicros } from '../../src/policies/model.js';
import { penaltyKeyOf, runPenalty } from '../../src/stores/redis/penalty-script.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { PENALTY_VECTORS } from './penalty-vectors.js';

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

/** Both runtimes over one sequence; Redis's own expiry runs on its real clock, so the key is made persistent after each write. */
async function runBoth(config: PenaltyConfig, steps: { at: number; refused: boolean }[]) {
  const bucket = bucketKey(`pen${seq++}`, 'login');
  let state: PenaltyState | undefined;
  const out = [];
  for (const step of steps) {
    const now = T0 + step.at;
    const model = stepPenalty(state, now, config, step.refused);
    if (model.write) state = model.state;
    const lua = await runPenalty(client, bucket, config, step.refused, toMicros(now));
    await client.persist(penaltyKeyOf(bucket));
    out.push({ model, lua });
  }
  return out;
}

function assertSame(result: Awaited<ReturnType<typeof runBoth>>[number], where: string): void {
  const { model, lua } = result;
  assert.deepEqual(
    { blocked: lua.blocked, retryAfterMs: lua.retryAfterMs, blockedUntilMs: lua.blockedUntilMs, state: lua.state },
    { blocked: model.blocked, retryAfterMs: model.retryAfterMs, blockedUntilMs: model.blockedUntilMs, state: model.state },
    where,
  );
}

describe('penalty box: model and Lua twin', () => {
  for (const vector of PENALTY_VECTORS) {
    it(vector.name, async () => {
      const results = await runBoth(parsePenalty(vector.penalty, 'penalty'), vector.steps);
      results.forEach((result, i) => {
        const where = `step ${i} at ${vector.steps[i]!.at}`;
        assert.deepEqual({ blocked: result.model.blocked, retryAfterMs: result.model.retryAfterMs }, vector.steps[i]!.expect, where);
        assertSame(result, where);
      });
    });
  }

  it('the key sits in the bucket\'s cluster slot and expires when its state no longer matters', async () => {
    const bucket = bucketKey('tenant-a', 'login');
    assert.equal(penaltyKeyOf(bucket), 'pb:{tenant-a}:login');
    const config = parsePenalty({ after: 1, withinMs: 1000, blockMs: 2000, maxMs: 2000, forgiveAfterMs: 3000 }, 'penalty');
    const reply = await runPenalty(client, bucket, config, true);
    assert.equal(reply.retryAfterMs, 2000);
    const ttl = await client.pttl(penaltyKeyOf(bucket));
    assert.ok(ttl > 4000 && ttl <= 5000, `pttl ${ttl}`);
  });

  it('agrees on random configs and sequences', async () => {
    const configArb = fc.record({
      after: fc.integer({ min: 1, max: 4 }),
      withinMs: fc.integer({ min: 1, max: 3000 }),
      blockMs: fc.integer({ min: 1, max: 3000 }),
      backoff: fc.oneof(fc.constant(1), fc.constant(2), fc.double({ min: 1, max: 3, noNaN: true })),
      extra: fc.integer({ min: 0, max: 10000 }),
      forgiveAfterMs: fc.integer({ min: 1, max: 8000 }),
    });
    await fc.assert(
      fc.asyncProperty(configArb, fc.array(fc.record({ dt: fc.integer({ min: 0, max: 1500 }), refused: fc.boolean() }), { minLength: 1, maxLength: 25 }), async (raw, rawSteps) => {
        const { extra, ...rest } = raw;
        const config = parsePenalty({ ...rest, maxMs: rest.blockMs + extra }, 'penalty');
        let at = 0;
        const steps = rawSteps.map((s) => {
          at += s.dt + (s.dt % 7) / 8;
          return { at, refused: s.refused };
        });
        const results = await runBoth(config, steps);
        for (const [i, result] of results.entries()) assertSame(result, `step ${i}`);
      }),
      { numRuns: 100 },
    );
  });
});
