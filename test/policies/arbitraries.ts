// Random valid rules for each policy, for the property-based twin tests.
import fc from 'fast-check';
import { parseRule, type PolicyName, type Rule } from '../../src/core/rule.js';

const rate = fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.double({ min: 0.1, max: 50, noNaN: true, noDefaultInfinity: true }));

export const ruleArbitraries: Partial<Record<PolicyName, fc.Arbitrary<Rule>>> & Record<'token_bucket', fc.Arbitrary<Rule>> = {
  token_bucket: fc
    .record({ capacity: fc.integer({ min: 1, max: 500 }), refillPerSecond: rate })
    .map((r) => parseRule({ policy: 'token_bucket', ...r })),
  gcra: fc.record({ capacity: fc.integer({ min: 1, max: 500 }), refillPerSecond: rate }).map((r) => parseRule({ policy: 'gcra', ...r })),
};
