// The concurrency limit's model and its Lua twin on a real redis-server agree,
// on the shared vectors and on random sequences: the decision, the count and
// the key's TTL of every step, and the leases left (id and expiry, in order).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { slotKey } from '../../src/core/ids.js';
import { type SlotOp, type SlotState, serializeSlots, slotStep } from '../../src/policies/concurrency/model.js';
import { toMicros } from '../../src/policies/model.js';
import { runSlot } from '../../src/stores/redis/slots.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

interface Step {
  at: number;
  op: SlotOp;
  id: string;
  expect?: { held?: boolean; inUse?: number; ttlMs?: number };
}
interface Vector {
  name: string;
  max: number;
  ttlMs: number;
  steps: Step[];
}

const T0 = 1_700_000_000_000;
let redis: RedisServer;
let client: Redis;
let keySeq = 0;

before(async () => {
  redis = await startRedis();
  client = redis.client();
});
after(async () => {
  client.disconnect();
  await redis.stop();
});

/** The leases the twin keeps, serialized as the model serializes its state. */
async function luaState(key: string): Promise<string> {
  const flat = await client.zrange(key, 0, -1, 'WITHSCORES');
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push(`${flat[i]}@${flat[i + 1]}`);
  return out.join(',');
}

async function runBoth(max: number, ttlMs: number, steps: Step[]) {
  const key = slotKey('twin', `k${keySeq++}`);
  let state: SlotState | undefined;
  const results = [];
  for (const step of steps) {
    const nowUs = toMicros(T0 + step.at);
    const model = slotStep(state, nowUs, { op: step.op, max, id: step.id, ttlMs });
    state = model.state;
    const lua = await runSlot(client, step.op, { key, max, leaseId: step.id, ttlMs }, nowUs);
    results.push({ step, model: { held: model.held, inUse: model.inUse, ttlMs: model.ttlMs }, lua, modelState: serializeSlots(model.state), luaState: await luaState(key) });
    // Every key left behind expires.
    assert.notEqual(await client.pttl(key), -1, `key without a TTL at ${step.at} ms`);
  }
  return results;
}

describe('concurrency: model and Lua twin', () => {
  const vectors = JSON.parse(readFileSync(new URL('../../src/policies/concurrency/vectors.json', import.meta.url), 'utf8')) as Vector[];
  for (const vector of vectors) {
    it(vector.name, async () => {
      for (const { step, model, lua, modelState, luaState: stored } of await runBoth(vector.max, vector.ttlMs, vector.steps)) {
        assert.deepEqual(lua, model, `Lua and model differ at ${step.at} ms (${step.op} ${step.id})`);
        assert.equal(stored, modelState, `stored leases differ at ${step.at} ms`);
        for (const [field, value] of Object.entries(step.expect ?? {})) assert.equal(model[field as keyof typeof model], value, `${field} at ${step.at} ms`);
      }
    });
  }

  it('random sequences: both runtimes agree and never hold more than max leases', async () => {
    const step = fc.record({ gap: fc.integer({ min: 0, max: 400 }), op: fc.constantFrom<SlotOp>('acquire', 'acquire', 'release'), id: fc.constantFrom('a', 'b', 'c', 'd', '{x}:y') });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 1000 }), fc.array(step, { minLength: 1, maxLength: 25 }), async (max, ttlMs, raw) => {
        const steps: Step[] = [];
        for (const s of raw) steps.push({ at: (steps.at(-1)?.at ?? 0) + s.gap, op: s.op, id: s.id });
        for (const { model, lua, modelState, luaState: stored } of await runBoth(max, ttlMs, steps)) {
          assert.deepEqual(lua, model);
          assert.equal(stored, modelState);
          assert.ok(model.inUse <= max);
        }
      }),
      { numRuns: 60 },
    );
  });
});
