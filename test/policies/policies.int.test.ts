// Model-only behaviour of the policies (what each one promises), plus one
// atomicity check of every Lua twin under concurrency on a real redis-server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import type { ModelDecision } from '../../src/core/decision.js';
import { bucketKey } from '../../src/core/ids.js';
import { capacityOf, parseRule, POLICIES, type Rule } from '../../src/policies/rule.js';
import { POLICY_REGISTRY } from '../../src/policies/index.js';
import { runScript } from '../../src/stores/redis/scripts.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { ruleArbitraries } from './arbitraries.js';

const T0 = 1_700_000_040_000; // ms, a multiple of every window used below (60 s included)

/** Runs (at ms after T0, cost) steps through a policy's model, keeping the state it writes. */
function run(rule: Rule, steps: [at: number, cost: number][]): ModelDecision[] {
  const { model } = POLICY_REGISTRY[rule.policy];
  let state: unknown;
  return steps.map(([at, cost]) => {
    const result = model.step(state, T0 + at, rule, cost);
    if (result.write) state = result.state;
    return result.decision;
  });
}

const allowedOf = (decisions: ModelDecision[]) => decisions.map((d) => d.allowed);

const sequence = fc.array(fc.record({ dt: fc.integer({ min: 0, max: 2000 }), cost: fc.integer({ min: 1, max: 5 }) }), { minLength: 1, maxLength: 40 });
const toSteps = (raw: { dt: number; cost: number }[], maxCost: number): [number, number][] => {
  let at = 0;
  return raw.map((s) => {
    at += s.dt;
    return [at, Math.min(s.cost, maxCost)];
  });
};

describe('gcra', () => {
  it('admits exactly what a token bucket of the same capacity and rate admits (whole-µs emission intervals)', () => {
    const divisorsOfAMillion = [1, 2, 4, 5, 8, 10, 16, 20, 25, 40, 50, 100, 125, 200, 250, 500, 1000];
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.constantFrom(...divisorsOfAMillion), sequence, (capacity, rate, raw) => {
        const steps = toSteps(raw, capacity);
        const g = run(parseRule({ policy: 'gcra', capacity, refillPerSecond: rate }), steps);
        const t = run(parseRule({ policy: 'token_bucket', capacity, refillPerSecond: rate }), steps);
        assert.deepEqual(g.map((d) => [d.allowed, d.retryAfterMs]), t.map((d) => [d.allowed, d.retryAfterMs]));
      }),
      { numRuns: 300 },
    );
  });

  it('admits a whole burst of `capacity` at one instant whatever the rate', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0.01, max: 10_000, noNaN: true }), (capacity, rate) => {
        const rule = parseRule({ policy: 'gcra', capacity, refillPerSecond: rate });
        const steps: [number, number][] = Array.from({ length: capacity + 1 }, () => [0, 1]);
        assert.deepEqual(allowedOf(run(rule, steps)), [...Array(capacity).fill(true), false]);
      }),
      { numRuns: 300 },
    );
  });
});

describe('token_bucket', () => {
  it('admits exactly a whole burst of `capacity` at one instant, whatever the rate (no rounding drift)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.double({ min: 0.01, max: 10_000, noNaN: true, noDefaultInfinity: true }), (capacity, refillPerSecond) => {
        const rule = parseRule({ policy: 'token_bucket', capacity, refillPerSecond });
        const decisions = run(rule, Array(capacity + 1).fill([0, 1]));
        assert.equal(decisions.filter((d) => d.allowed).length, capacity);
      }),
    );
  });

  it('a raised capacity applies at once: the deficit is kept, not the tokens', () => {
    const small = parseRule({ policy: 'token_bucket', capacity: 5, refillPerSecond: 0.1 });
    const large = parseRule({ policy: 'token_bucket', capacity: 50, refillPerSecond: 0.1 });
    const { model } = POLICY_REGISTRY.token_bucket;
    const state = model.step(undefined, 0, small, 5).state;
    assert.equal(model.step(state, 0, small, 1).decision.allowed, false);
    const raised = model.step(state, 0, large, 1);
    assert.deepEqual([raised.decision.allowed, raised.decision.remaining], [true, 44]);
  });
});

describe('fixed_window', () => {
  it('lets a client spend two full windows across a boundary (the known double burst)', () => {
    const rule = parseRule({ policy: 'fixed_window', limit: 100, windowMs: 60_000 });
    const decisions = run(rule, [[59_999, 100], [59_999.5, 1], [60_000, 100], [60_000, 1]]);
    assert.deepEqual(allowedOf(decisions), [true, false, true, false]);
  });
});

describe('sliding_window_log', () => {
  it('never admits more than `limit` units in any window-long span', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 500, max: 5000 }), sequence, (limit, windowMs, raw) => {
        const steps = toSteps(raw, limit);
        const decisions = run(parseRule({ policy: 'sliding_window_log', limit, windowMs }), steps);
        const admitted = steps.filter((_, i) => decisions[i]!.allowed);
        for (const [start] of admitted) {
          const inSpan = admitted.filter(([at]) => at >= start && at < start + windowMs).reduce((sum, [, cost]) => sum + cost, 0);
          assert.ok(inSpan <= limit, `${inSpan} units within ${windowMs} ms of ${start}`);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('sliding_window_counter', () => {
  it('weighs the previous window by how much of it the sliding window still covers', () => {
    const rule = parseRule({ policy: 'sliding_window_counter', limit: 10, windowMs: 1000 });
    // 10 in window 0; at 1250 ms the previous window still weighs 75%: 7.5 counted.
    assert.equal(run(rule, [[0, 10], [1250, 3]])[1]!.allowed, false);
    const fits = run(rule, [[0, 10], [1250, 2]])[1]!;
    assert.equal(fits.allowed, true);
    assert.equal(fits.remaining, 0); // 9.5 counted
    assert.equal(run(rule, [[0, 10], [1500, 5]])[1]!.allowed, true); // 5 + 5
  });
});

describe('leaky_bucket', () => {
  it('delays queued requests one interval apart by default, none with nodelay, after `delay` with delay=N', () => {
    const burst = (extra: object) => run(parseRule({ policy: 'leaky_bucket', ratePerSecond: 4, burst: 5, ...extra }), Array(7).fill([0, 1]));
    assert.deepEqual(burst({}).map((d) => d.delayMs), [0, 250, 500, 750, 1000, 1250, 0]);
    assert.deepEqual(burst({ nodelay: true }).map((d) => d.delayMs), [0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(burst({ delay: 3 }).map((d) => d.delayMs), [0, 0, 0, 0, 250, 500, 0]);
    assert.deepEqual(allowedOf(burst({})), [true, true, true, true, true, true, false]);
  });

  it('admits what a GCRA of capacity burst + 1 admits (shaping changes the delay, not the admission)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 }), fc.double({ min: 0.1, max: 200, noNaN: true }), fc.boolean(), sequence, (burst, rate, nodelay, raw) => {
        const steps = toSteps(raw, burst + 1);
        const leaky = run(parseRule({ policy: 'leaky_bucket', ratePerSecond: rate, burst, nodelay }), steps);
        const g = run(parseRule({ policy: 'gcra', capacity: burst + 1, refillPerSecond: rate }), steps);
        assert.deepEqual(allowedOf(leaky), allowedOf(g));
      }),
      { numRuns: 200 },
    );
  });
});

describe('every policy', () => {
  for (const policy of POLICIES) {
    it(`${policy}: a refused call retried after retryAfterMs is allowed`, () => {
      const { model } = POLICY_REGISTRY[policy];
      fc.assert(
        fc.property(ruleArbitraries[policy], sequence, (rule, raw) => {
          let state: unknown;
          for (const [at, cost] of toSteps(raw, capacityOf(rule))) {
            const now = T0 + at + 0.25; // off the ms grid, as real clocks are
            const result = model.step(state, now, rule, cost);
            if (result.write) state = result.state;
            if (!result.decision.allowed) {
              const retry = model.step(state, now + result.decision.retryAfterMs, rule, cost).decision;
              assert.equal(retry.allowed, true, `retry after ${result.decision.retryAfterMs} ms still refused`);
            }
          }
        }),
        { numRuns: 200 },
      );
    });
  }
});

describe('Lua twins under concurrency', () => {
  let redis: RedisServer;
  let client: Redis;
  before(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  after(async () => {
    client.disconnect();
    await redis.stop();
  });

  // Refill so slow (one unit per 1000 s) or windows so long that none happens during the test.
  const limit200: Rule[] = [
    parseRule({ policy: 'token_bucket', capacity: 200, refillPerSecond: 0.001 }),
    parseRule({ policy: 'gcra', capacity: 200, refillPerSecond: 0.001 }),
    parseRule({ policy: 'fixed_window', limit: 200, windowMs: 366 * 24 * 3600 * 1000 }),
    parseRule({ policy: 'sliding_window_log', limit: 200, windowMs: 3600 * 1000 }),
    parseRule({ policy: 'sliding_window_counter', limit: 200, windowMs: 366 * 24 * 3600 * 1000 }),
    parseRule({ policy: 'leaky_bucket', ratePerSecond: 0.001, burst: 199, nodelay: true }),
  ];
  for (const rule of limit200) {
    it(`${rule.policy}: 1000 concurrent calls on one key allow exactly 200`, async () => {
      const key = bucketKey('concurrency', rule.policy);
      const replies = await Promise.all(Array.from({ length: 1000 }, () => runScript(client, key, rule, 1)));
      assert.equal(replies.filter((r) => r.decision.allowed).length, 200);
    });
  }
});
