// Calendar windows in both runtimes: the shared calendar vectors run through
// the pure model and its Lua twin on a real redis-server, each step with the
// boundaries the instance would compute and the decision at the vector's own
// clock (as Redis TIME would give it); then a calendar rule on the Redis store
// with Redis TIME, whose reset is the real time to the next local midnight.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { type CalendarSpec, calendarBoundaries, calendarWindowAt } from '../../src/core/calendar.js';
import { bucketKey } from '../../src/core/ids.js';
import { type FixedWindowRule, parseRule } from '../../src/policies/rule.js';
import { fixedWindow } from '../../src/policies/fixed-window/model.js';
import { toMicros } from '../../src/policies/model.js';
import { runAdjust } from '../../src/stores/redis/adjust.js';
import { runScript } from '../../src/stores/redis/scripts.js';
import { RedisStore } from '../../src/stores/redis-store.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { calendarVectors, ruleForStep, ruleOfStep } from './calendar-vectors.js';

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

describe('calendar vectors: model and Lua twin', () => {
  for (const vector of calendarVectors()) {
    it(vector.name, async () => {
      const key = bucketKey('calendar', `k${keySeq++}`);
      let state: ReturnType<typeof fixedWindow.step>['state'] | undefined;
      for (const [i, step] of vector.steps.entries()) {
        const at = Date.parse(step.at);
        const rule = ruleForStep(ruleOfStep(vector, i), step);
        const model = fixedWindow.step(state, at, rule, step.cost);
        if (model.write) state = model.state;
        const lua = await runScript(client, key, rule, step.cost, toMicros(at));
        const { source: _source, ...luaDecision } = lua.decision;
        assert.deepEqual(luaDecision, model.decision, `Lua decision differs from the model at step ${i} (${step.at})`);
        const luaState = (await runScript(client, key, rule, 0, toMicros(at))).state;
        assert.equal(luaState, fixedWindow.serialize(model.state), `Lua state differs from the model at step ${i}`);
        assert.equal(model.decision.allowed, step.expect.allowed);
      }
    });
  }

  it('adjust picks the same calendar window in both runtimes', async () => {
    const vector = calendarVectors().find((v) => v.name.startsWith('billing anchor 31: January'))!;
    const key = bucketKey('calendar', `k${keySeq++}`);
    let state: ReturnType<typeof fixedWindow.step>['state'] | undefined;
    for (const [i, step] of vector.steps.entries()) {
      const at = Date.parse(step.at);
      const rule = ruleForStep(ruleOfStep(vector, i), step);
      state = fixedWindow.adjust!(state, at, rule, 2).state;
      assert.equal(await runAdjust(client, key, rule, 2, toMicros(at)), fixedWindow.serialize(state), step.at);
    }
  });
});

describe('calendar windows: model and Lua twin on random sequences', () => {
  // Moments where windows turn or clocks change: DST both ways, month ends, a leap day, a year's end.
  const NEAR = ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z', '2026-03-08T07:00:00Z', '2026-11-01T06:00:00Z', '2028-02-29T00:00:00Z', '2026-12-31T23:00:00Z'].map(Date.parse);
  const spec: fc.Arbitrary<CalendarSpec> = fc.oneof(
    fc.record({ unit: fc.constant('day' as const), timeZone: fc.constantFrom('Europe/Paris', 'America/New_York', 'America/Santiago', 'UTC') }),
    fc.record({ unit: fc.constant('week' as const), timeZone: fc.constantFrom('Europe/Paris', 'Asia/Tokyo'), anchor: fc.integer({ min: 1, max: 7 }) }),
    fc.record({ unit: fc.constant('month' as const), timeZone: fc.constantFrom('Europe/Paris', 'America/New_York', 'UTC'), anchor: fc.integer({ min: 1, max: 31 }) }),
  );
  const HOUR = 3_600_000;

  it('agree on every decision and state, whatever the instance clock reads within ten minutes of the deciding clock', async () => {
    await fc.assert(
      fc.asyncProperty(
        spec,
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom(...NEAR),
        fc.integer({ min: -48 * HOUR, max: 48 * HOUR }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 12 * HOUR }), skew: fc.integer({ min: -600_000, max: 600_000 }), cost: fc.integer({ min: 0, max: 3 }) }), { minLength: 1, maxLength: 12 }),
        async (calendar, limit, near, shift, steps) => {
          const rule = parseRule({ policy: 'fixed_window', limit, calendar }) as FixedWindowRule;
          const key = bucketKey('calendar-random', `k${keySeq++}`);
          let state: ReturnType<typeof fixedWindow.step>['state'] | undefined;
          let at = near + shift;
          for (const step of steps) {
            at += step.dt;
            const resolved = { ...rule, boundaries: calendarBoundaries(at + step.skew, calendar).boundaries };
            const model = fixedWindow.step(state, at, resolved, Math.min(step.cost, limit));
            if (model.write) state = model.state;
            assert.equal(model.state.start, calendarWindowAt(at, calendar).start * 1000, 'the model picks the window the deciding clock is in');
            const lua = await runScript(client, key, resolved, Math.min(step.cost, limit), toMicros(at));
            const { source: _source, ...luaDecision } = lua.decision;
            assert.deepEqual(luaDecision, model.decision);
            assert.equal((await runScript(client, key, resolved, 0, toMicros(at))).state, fixedWindow.serialize(model.state));
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('a calendar rule on the Redis store, by Redis TIME', () => {
  it('counts in the current local day and resets at the next local midnight', async () => {
    const store = new RedisStore(client);
    const rule = parseRule({ policy: 'fixed_window', limit: 2, calendar: { unit: 'day', timeZone: 'America/New_York' } }) as FixedWindowRule;
    const bucket = bucketKey('calendar-store', 'tenant');
    const first = await store.consume(bucket, rule, 2);
    const refused = await store.consume(bucket, rule, 1);
    const [seconds, micros] = (await client.time()) as unknown as [string, string];
    const redisNow = Number(seconds) * 1000 + Number(micros) / 1000;
    const { end } = calendarWindowAt(redisNow, rule.calendar!);
    assert.equal(first.allowed, true);
    assert.equal(refused.allowed, false);
    assert.ok(Math.abs(refused.retryAfterMs - (end - redisNow)) < 1000, `retry ${refused.retryAfterMs} ms vs ${end - redisNow} ms to midnight in New York`);
    assert.equal(refused.resetAfterMs, refused.retryAfterMs);
    const ttl = await client.pttl(bucket.hash);
    assert.ok(ttl > 0 && Math.abs(ttl - (end - redisNow)) < 1000, `the key expires at the window's end (ttl ${ttl})`);
  });
});
