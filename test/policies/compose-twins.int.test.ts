// Several limits decided as one: the model composition (src/policies/compose.ts)
// and its Lua twin (compose.lua, one script call) on a real redis-server must
// agree, on the shared vectors and on random sequences; and either way a
// refused request leaves every bucket as it was.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { bucketKey } from '../../src/core/ids.js';
import { parseRule, POLICIES, type Rule } from '../../src/policies/rule.js';
import { stepAll } from '../../src/policies/compose.js';
import { POLICY_REGISTRY } from '../../src/policies/index.js';
import { toMicros } from '../../src/policies/model.js';
import { runAll } from '../../src/stores/redis/multi-script.js';
import { redisKeyOf, runScript } from '../../src/stores/redis/scripts.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { ruleArbitraries } from './arbitraries.js';

interface Vector {
  name: string;
  rules: unknown[];
  shadow: boolean[];
  steps: { at: number; cost: number; expect: { admitted: boolean; allowed: boolean[]; remaining: number[] } }[];
}

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

/**
 * The sequences run on a simulated clock, but Redis expires keys on its real
 * one: a key whose TTL is a few ms of the simulated clock would vanish while a
 * loaded machine runs the next step. Each bucket is made persistent by a
 * PERSIST sent right behind the script call (the same connection, so Redis
 * runs it next), and again once the reply is in (the first call of a script
 * shape is retried as EVAL after NOSCRIPT).
 */
async function keptAlive<T>(call: Promise<T>, rules: Rule[], buckets: ReturnType<typeof bucketKey>[]): Promise<T> {
  const keys = rules.map((rule, i) => redisKeyOf(rule.policy, buckets[i]!));
  const persist = () => Promise.all(keys.map((key) => client.persist(key)));
  const first = persist();
  const reply = await call;
  await first;
  await persist();
  return reply;
}

/** Runs a sequence through the composition of models and through the script; returns both per step. */
async function runBoth(rules: Rule[], shadow: boolean[], steps: { at: number; cost: number }[]) {
  const tenant = `multi${seq++}`;
  const buckets = rules.map((_, i) => bucketKey(tenant, `limit${i}`));
  const states: unknown[] = rules.map(() => undefined);
  // The set's script loaded first (a peek, on buckets of their own): a first EVALSHA of it would get
  // NOSCRIPT and be resent as EVAL after the reply, when keptAlive's first PERSIST has already run, and
  // a bucket written with a TTL of a few ms could expire in real time before the second one on a loaded machine.
  const warm = rules.map((rule, i) => ({ bucket: bucketKey(`${tenant}-warm`, `limit${i}`), rule, cost: 0, shadow: false }));
  await runAll(client, warm, toMicros(T0));
  const out = [];
  for (const step of steps) {
    const now = T0 + step.at;
    const model = stepAll(rules.map((rule, i) => ({ state: states[i], rule, cost: step.cost, shadow: shadow[i]! })), now);
    model.steps.forEach((s, i) => {
      if (s.write) states[i] = s.state;
    });
    const calls = rules.map((rule, i) => ({ bucket: buckets[i]!, rule, cost: step.cost, shadow: shadow[i]! }));
    const lua = await keptAlive(runAll(client, calls, toMicros(now)), rules, buckets);
    const luaStates = await keptAlive(Promise.all(rules.map(async (rule, i) => (await runScript(client, buckets[i]!, rule, 0, toMicros(now))).state)), rules, buckets);
    // What a peek at this instant returns as state, as the script's peek does.
    const modelStates = rules.map((rule, i) => {
      const { model: m } = POLICY_REGISTRY[rule.policy];
      return states[i] === undefined ? '' : m.serialize(m.step(states[i], now, rule, 0).state);
    });
    out.push({ model, lua, luaStates, modelStates });
  }
  return out;
}

function assertSame(result: Awaited<ReturnType<typeof runBoth>>[number], where: string): void {
  assert.equal(result.lua.admitted, result.model.admitted, `admitted at ${where}`);
  assert.deepEqual(
    result.lua.decisions.map(({ source: _s, ...d }) => d),
    result.model.steps.map((s) => s.decision),
    `decisions at ${where}`,
  );
  // A bucket never written reads back as the empty state in Lua ('' or a fresh full one).
  result.luaStates.forEach((lua, i) => {
    if (result.modelStates[i] !== '') assert.equal(lua, result.modelStates[i], `state of limit ${i} at ${where}`);
  });
}

describe('several limits as one: composition of models and its Lua twin', () => {
  const vectors = JSON.parse(readFileSync(new URL('../../src/policies/compose-vectors.json', import.meta.url), 'utf8')) as Vector[];
  for (const vector of vectors) {
    it(vector.name, async () => {
      const rules = vector.rules.map((rule) => parseRule(rule));
      const results = await runBoth(rules, vector.shadow, vector.steps);
      results.forEach((result, i) => {
        const { expect } = vector.steps[i]!;
        const where = `step ${i}`;
        assert.equal(result.model.admitted, expect.admitted, `model admitted at ${where}`);
        assert.deepEqual(result.model.steps.map((s) => s.decision.allowed), expect.allowed, `model allowed at ${where}`);
        assert.deepEqual(result.model.steps.map((s) => s.decision.remaining), expect.remaining, `model remaining at ${where}`);
        assertSame(result, where);
      });
    });
  }

  it('agrees on random sets of limits and sequences, and a refusal writes nothing', async () => {
    const limitsArb = fc.array(fc.constantFrom(...POLICIES).chain((policy) => ruleArbitraries[policy]), { minLength: 2, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(
        limitsArb,
        fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 1500 }), cost: fc.integer({ min: 0, max: 2 }) }), { minLength: 1, maxLength: 20 }),
        async (rules, shadow, raw) => {
          let at = 0;
          const steps = raw.map((s) => {
            at += s.dt;
            return { at, cost: s.cost };
          });
          const results = await runBoth(rules, shadow.slice(0, rules.length), steps);
          for (const [i, result] of results.entries()) assertSame(result, `step ${i}`);
        },
      ),
      { numRuns: 80 },
    );
  });
});
