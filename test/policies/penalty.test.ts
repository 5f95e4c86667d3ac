// The penalty box's pure model on the shared vectors (the Lua twin runs the
// same ones in penalty-twins.int.test.ts), and its config's validation, each
// bad value refused with the field named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePenalty } from '../../src/policies/penalty/config.js';
import { blockMicros, type PenaltyState, stepPenalty } from '../../src/policies/penalty/model.js';
import { PENALTY_VECTORS } from './penalty-vectors.js';

const T0 = 1_700_000_000_000;

describe('penalty box model', () => {
  for (const vector of PENALTY_VECTORS) {
    it(vector.name, () => {
      const config = parsePenalty(vector.penalty, 'penalty');
      let state: PenaltyState | undefined;
      vector.steps.forEach((step, i) => {
        const result = stepPenalty(state, T0 + step.at, config, step.refused);
        assert.deepEqual({ blocked: result.blocked, retryAfterMs: result.retryAfterMs }, step.expect, `step ${i} at ${step.at}`);
        if (result.write) state = result.state;
      });
    });
  }

  it('a refused request while blocked writes nothing and does not lengthen the block', () => {
    const config = parsePenalty({ after: 1, withinMs: 1000, blockMs: 5000 }, 'penalty');
    const first = stepPenalty(undefined, T0, config, true);
    const again = stepPenalty(first.state, T0 + 1000, config, true);
    assert.equal(again.blocked, true);
    assert.equal(again.write, false);
    assert.equal(again.blockedUntilMs, T0 + 5000);
  });

  it('keeps the state only as long as it matters: the TTL ends at the forgiveness or the run end', () => {
    const config = parsePenalty({ after: 2, withinMs: 1000, blockMs: 5000, maxMs: 5000, forgiveAfterMs: 7000 }, 'penalty');
    assert.equal(stepPenalty(undefined, T0, config, true).ttlMs, 1000);
    const blocked = stepPenalty(stepPenalty(undefined, T0, config, true).state, T0, config, true);
    assert.equal(blocked.ttlMs, 12000);
  });

  it('the block grows by backoff and stops at max however many offences', () => {
    const config = parsePenalty({ after: 1, withinMs: 1000, blockMs: 1000, backoff: 2, maxMs: 10000 }, 'penalty');
    assert.deepEqual([0, 1, 2, 3, 4, 1e9].map((level) => blockMicros(level, config) / 1000), [1000, 2000, 4000, 8000, 10000, 10000]);
  });
});

describe('penalty config', () => {
  const refused: [unknown, string, RegExp][] = [
    [{ after: 0, withinMs: 1000, blockMs: 1000 }, 'limits[0].penalty.after', /at least 1/],
    [{ after: 2.5, withinMs: 1000, blockMs: 1000 }, 'limits[0].penalty.after', /integer/],
    [{ after: 3, withinMs: 1000, blockMs: 500 }, 'limits[0].penalty.blockMs', /window \(1000 ms\)/],
    [{ after: 3, withinMs: 1000, blockMs: 5000, backoff: 0.5 }, 'limits[0].penalty.backoff', /from 1/],
    [{ after: 3, withinMs: 1000, blockMs: 5000, maxMs: 4000 }, 'limits[0].penalty.maxMs', /at least blockMs \(5000\)/],
    [{ after: 3, blockMs: 5000 }, 'limits[0].penalty.withinMs', /milliseconds/],
    [{ after: 3, withinMs: 1000, blockMs: 5000, block: 1 }, 'limits[0].penalty.block', /unknown field/],
    ['5', 'limits[0].penalty', /must be an object/],
  ];
  for (const [input, field, message] of refused) {
    it(`refuses ${JSON.stringify(input)} naming ${field}`, () => {
      assert.throws(() => parsePenalty(input, 'limits[0].penalty', 1000), (error: Error & { field?: string }) => {
        assert.equal(error.field, field);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  it('defaults: backoff 1, max 64 blocks capped at 24 h (never below the block), forgiveness after max', () => {
    assert.deepEqual(parsePenalty({ after: 5, withinMs: 60000, blockMs: 3_600_000, backoff: 2 }, 'p'), {
      after: 5, withinMs: 60000, blockMs: 3_600_000, backoff: 2, maxMs: 86_400_000, forgiveAfterMs: 86_400_000,
    });
    assert.equal(parsePenalty({ after: 5, withinMs: 60000, blockMs: 1000 }, 'p').maxMs, 64000);
    assert.equal(parsePenalty({ after: 5, withinMs: 60000, blockMs: 2 * 86_400_000 }, 'p').maxMs, 2 * 86_400_000);
  });
});
