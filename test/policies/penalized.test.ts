// A limit with its penalty box decided as one (src/policies/penalty/penalized.ts)
// on the shared vectors, by the model and by the MemoryStore on a manual
// clock: a blocked key is refused without its limit being consulted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRule } from '../../src/policies/rule.js';
import { parsePenalty } from '../../src/policies/penalty/config.js';
import type { PenaltyState } from '../../src/policies/penalty/model.js';
import { stepPenalized } from '../../src/policies/penalty/penalized.js';
import { bucketKey } from '../../src/core/ids.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { PENALIZED_VECTORS } from './penalty-vectors.js';

const T0 = 1_700_000_000_000;

describe('a limit with a penalty box: model and MemoryStore', () => {
  for (const vector of PENALIZED_VECTORS) {
    it(vector.name, async () => {
      const rule = parseRule(vector.rule);
      const penalty = parsePenalty(vector.penalty, 'penalty');
      let now = T0;
      const store = new MemoryStore({ now: () => now });
      const bucket = bucketKey('t', 'login');
      let policyState: unknown;
      let penaltyState: PenaltyState | undefined;
      for (const [i, step] of vector.steps.entries()) {
        now = T0 + step.at;
        const model = stepPenalized({ policyState, penaltyState, now, rule, cost: step.cost, penalty });
        if (model.policy.write) policyState = model.policy.state;
        if (model.penalty.write) penaltyState = model.penalty.state;
        const where = `step ${i} at ${step.at}`;
        assert.equal(model.decision.allowed, step.expect.allowed, `allowed at ${where}`);
        assert.equal(model.blocked, step.expect.blocked, `blocked at ${where}`);
        if (step.expect.retryAfterMs !== undefined) assert.equal(model.decision.retryAfterMs, step.expect.retryAfterMs, `retryAfterMs at ${where}`);
        if (model.decision.retryAfterMs >= penalty.blockMs || model.blocked) assert.ok(model.decision.blockedUntilMs! > now, `blockedUntilMs at ${where}`);
        const { source, ...memory } = await store.consumePenalized(bucket, rule, step.cost, penalty);
        assert.equal(source, 'memory');
        assert.deepEqual(memory, model.decision, `memory store at ${where}`);
      }
    });
  }
});

describe('MemoryStore: blocked keys listed and lifted', () => {
  it('lists a running block with its end, forgets it once lifted or ended, and refuses to lift anything else', async () => {
    let now = T0;
    const store = new MemoryStore({ now: () => now });
    const rule = parseRule({ policy: 'fixed_window', limit: 1, windowMs: 60000 });
    const penalty = parsePenalty({ after: 1, withinMs: 60000, blockMs: 600000, backoff: 2 }, 'penalty');
    const a = bucketKey('a', 'login');
    const b = bucketKey('b', 'login');
    for (const bucket of [a, b, a, b]) await store.consumePenalized(bucket, rule, 1, penalty);
    assert.deepEqual(store.listBlocked(), [
      { key: 'pb:{a}:login', blockedUntilMs: T0 + 600000 },
      { key: 'pb:{b}:login', blockedUntilMs: T0 + 600000 },
    ]);
    assert.equal(store.liftBlock('pb:{a}:login'), true);
    assert.deepEqual(store.listBlocked().map((entry) => entry.key), ['pb:{b}:login']);
    assert.throws(() => store.liftBlock('rl:{a}:login'), /key: must be a penalty key/);
    now = T0 + 600000;
    assert.deepEqual(store.listBlocked(), []);
  });
});
