// The breaker's rules on the path the guard takes while it is closed (calls
// counted, not fired through opossum): consecutive failures, the error
// percentage over the rolling window, and the half-open probe's outcome.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { type BreakerOptions, RedisBreaker } from '../../../src/limiter/deadline/breaker.js';
import { eventually, silent } from '../../helpers/resilient-engine.js';

const OPTIONS: BreakerOptions = { failureThreshold: 5, errorThresholdPercentage: 50, volumeThreshold: 20, rollingWindowMs: 1000, resetTimeoutMs: 50, silenceMs: 20 };

/** `pattern` of counted calls: true succeeds, false fails. */
function calls(breaker: RedisBreaker, pattern: boolean[]): void {
  for (const ok of pattern) {
    breaker.noteCall();
    if (ok) breaker.succeeded();
    else breaker.failed(new Error('boom'));
  }
}

/** A success, then a failure, and so on: at each failure exactly half the calls so far failed. */
const alternating = (n: number) => Array.from({ length: n }, (_, i) => i % 2 === 0);

test('breaker: consecutive failures open it; a success between them resets the streak', () => {
  const breaker = new RedisBreaker(OPTIONS, silent);
  try {
    calls(breaker, [false, false, false, false, true, false, false, false, false]);
    assert.equal(breaker.closed, true, 'never 5 failures in a row, and 8 of 9 calls is below the volume threshold');
    calls(breaker, [false]);
    assert.equal(breaker.closed, false, 'the fifth in a row opens it');
    assert.equal(breaker.lastFailure, 'boom');
  } finally {
    breaker.shutdown();
  }
});

test('breaker: more than the error percentage of the window opens it without a streak; at most it does not', () => {
  const below = new RedisBreaker(OPTIONS, silent);
  const above = new RedisBreaker(OPTIONS, silent);
  try {
    calls(below, alternating(40)); // every other call fails: 50 %, not more
    assert.equal(below.closed, true);
    calls(above, [...alternating(40), false]); // 21 of 41 fail, never more than twice in a row
    assert.equal(above.closed, false);
  } finally {
    below.shutdown();
    above.shutdown();
  }
});

test('breaker: failures older than the rolling window no longer count', async () => {
  const breaker = new RedisBreaker({ ...OPTIONS, rollingWindowMs: 100 }, silent);
  try {
    calls(breaker, Array.from({ length: 19 }, (_, i) => i % 3 === 0)); // 12 of 19 fail, below the volume
    await sleep(150);
    calls(breaker, [true, false, true, true]);
    assert.equal(breaker.closed, true, 'only the 4 recent calls are in the window');
  } finally {
    breaker.shutdown();
  }
});

test('breaker: half-open, a counted success closes it and a counted failure opens it again', async () => {
  const breaker = new RedisBreaker(OPTIONS, silent);
  try {
    calls(breaker, [false, false, false, false, false]);
    await eventually(() => !breaker.closed && !breaker.opened, 2000, 'half-open after resetTimeoutMs');
    calls(breaker, [false]);
    assert.equal(breaker.opened, true, 'a failure while half-open re-opens');
    await eventually(() => !breaker.closed && !breaker.opened, 2000, 'half-open again');
    calls(breaker, [true]);
    assert.equal(breaker.closed, true, 'a success while half-open closes');
    assert.equal(breaker.lastFailure, undefined);
  } finally {
    breaker.shutdown();
  }
});
