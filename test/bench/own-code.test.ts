// bench:own's statistics: the order-statistic interval of a median, checked
// against the binomial tail by hand, and the spread it reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { medianIntervalRank, spreadOf } from '../../bench/own-code.js';

describe('medianIntervalRank', () => {
  it('is the largest k whose k-th smallest and largest hold the median with 90 % confidence', () => {
    // P(Bin(30, ½) ≤ 10) = 0.049 ≤ 0.05 < P(≤ 11) = 0.100: the 11th and 20th of 30.
    assert.equal(medianIntervalRank(30), 11);
    // P(Bin(9, ½) ≤ 1) = 0.0195, P(≤ 2) = 0.0898.
    assert.equal(medianIntervalRank(9), 2);
    // Five values: the whole range holds the median with 1 − 2/32 = 93.75 %.
    assert.equal(medianIntervalRank(5), 1);
  });

  it('is 0 when even the whole range of so few values holds the median with less than 90 %', () => {
    assert.equal(medianIntervalRank(4), 0);
    assert.equal(medianIntervalRank(1), 0);
  });
});

describe('spreadOf', () => {
  it('gives the median, its interval and the middle half of the values, whatever their order', () => {
    const values = Array.from({ length: 30 }, (_, i) => (i * 7) % 30).map((i) => i / 100);
    assert.deepEqual(spreadOf(values), { median: 0.145, interval: [0.1, 0.19], quartiles: [0.07, 0.22] });
  });

  it('gives no interval from too few values', () => {
    assert.deepEqual(spreadOf([0.3, 0.1, 0.2]), { median: 0.2, interval: undefined, quartiles: [0.1, 0.3] });
  });
});
