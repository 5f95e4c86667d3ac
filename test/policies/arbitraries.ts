// Random valid rules for each policy, for the property-based twin tests.
import fc from 'fast-check';
import { parseRule, type PolicyName, type Rule } from '../../src/policies/rule.js';

const rate = fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.double({ min: 0.1, max: 50, noNaN: true, noDefaultInfinity: true }));

/**
 * At most 200/s, so one unit keeps a key alive at least 5 ms of Redis's real
 * clock: the sequences run on a simulated clock, several calls per instant.
 */
const paceRate = fc.oneof(fc.integer({ min: 1, max: 200 }), fc.double({ min: 0.1, max: 50, noNaN: true, noDefaultInfinity: true }));

/**
 * Windows of at least 200 ms: Redis expires keys on its own clock while the
 * vectors run on a simulated one, so a key must outlive a test run in real time.
 */
const windowMs = fc.oneof(fc.integer({ min: 200, max: 10_000 }), fc.constantFrom(1000, 2000, 5000));

export const ruleArbitraries: Record<PolicyName, fc.Arbitrary<Rule>> = {
  token_bucket: fc
    .record({ capacity: fc.integer({ min: 1, max: 500 }), refillPerSecond: rate })
    .map((r) => parseRule({ policy: 'token_bucket', ...r })),
  gcra: fc
    .record({ capacity: fc.integer({ min: 1, max: 500 }), refillPerSecond: paceRate })
    .map((r) => parseRule({ policy: 'gcra', ...r })),
  fixed_window: fc
    .record({ limit: fc.integer({ min: 1, max: 50 }), windowMs, start: fc.constantFrom('aligned', 'offset', 'first_request'), offset: fc.double({ min: 0, max: 0.999, noNaN: true }) })
    .map(({ limit, windowMs, start, offset }) =>
      parseRule({
        policy: 'fixed_window',
        limit,
        windowMs,
        ...(start === 'first_request' ? { windowStart: 'first_request' } : {}),
        ...(start === 'offset' ? { offsetMs: Math.floor(offset * windowMs) } : {}),
      }),
    ),
  sliding_window_log: fc
    .record({ limit: fc.integer({ min: 1, max: 50 }), windowMs })
    .map((r) => parseRule({ policy: 'sliding_window_log', ...r })),
  sliding_window_counter: fc
    .record({ limit: fc.integer({ min: 1, max: 50 }), windowMs })
    .map((r) => parseRule({ policy: 'sliding_window_counter', ...r })),
  leaky_bucket: fc
    .record({
      ratePerSecond: paceRate,
      burst: fc.integer({ min: 0, max: 50 }),
      shaping: fc.oneof(fc.constant({}), fc.constant({ nodelay: true }), fc.integer({ min: 0, max: 50 }).map((delay) => ({ delay }))),
    })
    .map(({ shaping, ...r }) => {
      const delay = 'delay' in shaping ? { delay: Math.min(shaping.delay, r.burst) } : shaping;
      return parseRule({ policy: 'leaky_bucket', ...r, ...delay });
    }),
};
