// One model, two runtimes: every policy's pure model and its Lua twin on a real
// redis-server must agree, on the shared vectors and on random sequences.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { bucketKey } from '../../src/core/ids.js';
import { parseRule, type PolicyName, type Rule } from '../../src/policies/rule.js';
import { POLICY_REGISTRY } from '../../src/policies/index.js';
import { toMicros } from '../../src/policies/model.js';
import { runAdjust } from '../../src/stores/redis/adjust.js';
import { redisKeyOf, runScript } from '../../src/stores/redis/scripts.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { ruleArbitraries } from './arbitraries.js';

interface Vector {
  name: string;
  rule: unknown;
  steps: Step[];
}

/** A decision of `cost` units, or with `adjust` an unconditional take (negative: give back) instead. */
interface Step {
  at: number;
  cost: number;
  adjust?: number;
  expect: Record<string, unknown>;
}

const T0 = 1_700_000_000_000; // ms; vectors give times relative to it
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

/** Runs one sequence through both runtimes; returns both decision lists and states. */
async function runBoth(rule: Rule, steps: Omit<Step, 'expect'>[]) {
  const { model } = POLICY_REGISTRY[rule.policy];
  const key = bucketKey('twin', `k${keySeq++}`);
  let state: unknown;
  const results = [];
  for (const step of steps) {
    const now = T0 + step.at;
    if (step.adjust !== undefined) {
      state = model.adjust!(state, now, rule, step.adjust).state;
      const luaState = await runAdjust(client, key, rule, step.adjust, toMicros(now));
      assert.equal(luaState, model.serialize(state), `Lua adjust state differs from the model at ${step.at} ms`);
      // Every key an adjust leaves behind expires (-2: none left, -1 would be no TTL).
      assert.notEqual(await client.pttl(redisKeyOf(rule.policy, key)), -1, `key without a TTL after adjust at ${step.at} ms`);
      continue;
    }
    const fromModel = model.step(state, now, rule, step.cost);
    if (fromModel.write) state = fromModel.state;
    const fromLua = await runScript(client, key, rule, step.cost, toMicros(now));
    // The script gives its state on peeks only: peek at the same instant to read what it stored.
    const luaState = step.cost === 0 ? fromLua.state : (await runScript(client, key, rule, 0, toMicros(now))).state;
    const { source: _source, ...luaDecision } = fromLua.decision;
    results.push({ step, model: fromModel.decision, lua: luaDecision, modelState: model.serialize(fromModel.state), luaState });
  }
  return results;
}

for (const policy of Object.keys(POLICY_REGISTRY) as PolicyName[]) {
  describe(`${policy}: model and Lua twin`, () => {
    const file = new URL(`../../src/policies/${policy.replaceAll('_', '-')}/vectors.json`, import.meta.url);
    const vectors = JSON.parse(readFileSync(file, 'utf8')) as Vector[];

    for (const vector of vectors) {
      it(vector.name, async () => {
        const rule = parseRule(vector.rule);
        const results = await runBoth(rule, vector.steps);
        const decided = vector.steps.filter((step) => step.adjust === undefined);
        results.forEach((result, i) => {
          const where = `step ${i} (at ${result.step.at} ms, cost ${result.step.cost})`;
          for (const [field, expected] of Object.entries(decided[i]!.expect)) {
            assert.equal((result.model as unknown as Record<string, unknown>)[field], expected, `model ${field} at ${where}`);
          }
          assert.deepEqual(result.lua, result.model, `Lua decision differs from the model at ${where}`);
          assert.equal(result.luaState, result.modelState, `Lua state differs from the model at ${where}`);
        });
      });
    }

    it('agrees with the model on random sequences of (time step, cost)', async () => {
      const arbitrary = ruleArbitraries[policy];
      await fc.assert(
        fc.asyncProperty(
          arbitrary.chain((rule) =>
            fc.tuple(
              fc.constant(rule),
              fc.array(fc.record({ dt: fc.integer({ min: 0, max: 3000 }), cost: fc.integer({ min: 0, max: Math.min(5, maxCost(rule)) }) }), { minLength: 1, maxLength: 25 }),
            ),
          ),
          async ([rule, raw]) => {
            let at = 0;
            const steps = raw.map((s) => {
              at += s.dt;
              return { at, cost: s.cost };
            });
            for (const result of await runBoth(rule, steps)) {
              assert.deepEqual(result.lua, result.model);
              assert.equal(result.luaState, result.modelState);
            }
          },
        ),
        { numRuns: 60 },
      );
    });

    if (POLICY_REGISTRY[policy].model.adjust) {
      it('adjust agrees with its Lua twin on random sequences of decisions and adjusts', async () => {
        await fc.assert(
          fc.asyncProperty(
            ruleArbitraries[policy].chain((rule) =>
              fc.tuple(
                fc.constant(rule),
                fc.array(
                  fc.record({ dt: fc.integer({ min: 0, max: 3000 }), cost: fc.integer({ min: 0, max: Math.min(5, maxCost(rule)) }), adjust: fc.option(fc.integer({ min: -5, max: 12 }), { nil: undefined }) }),
                  { minLength: 1, maxLength: 25 },
                ),
              ),
            ),
            async ([rule, raw]) => {
              let at = 0;
              const steps = raw.map((s) => {
                at += s.dt;
                return { at, cost: s.cost, adjust: s.adjust };
              });
              for (const result of await runBoth(rule, steps)) {
                assert.deepEqual(result.lua, result.model);
                assert.equal(result.luaState, result.modelState);
              }
            },
          ),
          { numRuns: 60 },
        );
      });
    }

    it('a state past its TTL decides like no state at all (so an expired key changes nothing)', () => {
      const { model } = POLICY_REGISTRY[policy];
      fc.assert(
        fc.property(arbitraryAndCosts(policy), ([rule, costs]) => {
          let state: unknown;
          let now = T0;
          let ttl = 0;
          for (const cost of costs) {
            const r = model.step(state, now, rule, cost);
            if (r.write) {
              state = r.state;
              ttl = r.ttlMs;
            }
          }
          const later = now + ttl;
          const withState = model.step(state, later, rule, 1).decision;
          const fresh = model.step(undefined, later, rule, 1).decision;
          assert.deepEqual(withState, fresh);
          now = later;
        }),
        { numRuns: 200 },
      );
    });

    if (POLICY_REGISTRY[policy].model.adjust) {
      it('an adjusted state past its TTL decides like no state at all', () => {
        const { model } = POLICY_REGISTRY[policy];
        fc.assert(
          fc.property(arbitraryAndCosts(policy), fc.array(fc.integer({ min: -5, max: 12 }), { minLength: 1, maxLength: 5 }), ([rule, costs], deltas) => {
            let state: unknown;
            let ttl = 0;
            for (const cost of costs) {
              const r = model.step(state, T0, rule, cost);
              if (r.write) state = r.state;
            }
            for (const delta of deltas) ({ state, ttlMs: ttl } = model.adjust!(state, T0, rule, delta));
            assert.deepEqual(model.step(state, T0 + ttl, rule, 1).decision, model.step(undefined, T0 + ttl, rule, 1).decision);
          }),
          { numRuns: 200 },
        );
      });
    }
  });
}

function maxCost(rule: Rule): number {
  switch (rule.policy) {
    case 'token_bucket':
    case 'gcra':
      return rule.capacity;
    case 'leaky_bucket':
      return rule.burst + 1;
    default:
      return rule.limit;
  }
}

function arbitraryAndCosts(policy: PolicyName) {
  return ruleArbitraries[policy].chain((rule) => fc.tuple(fc.constant(rule), fc.array(fc.integer({ min: 1, max: Math.min(5, maxCost(rule)) }), { minLength: 1, maxLength: 10 })));
}
