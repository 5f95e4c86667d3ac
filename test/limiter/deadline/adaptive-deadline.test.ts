// The adaptive deadline alone (src/limiter/deadline/adaptive-deadline.ts), fed sample
// silences and times: no Redis, no clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ADAPTIVE_DEADLINE, AdaptiveDeadline, FixedDeadline } from '../../../src/limiter/deadline/deadline.js';

const { floorMs, ceilingMs, windowMs, slots } = ADAPTIVE_DEADLINE;
const slotMs = windowMs / slots;

/** Round trips of `rttMs` ± `jitter` (a fixed pattern), one every `everyMs` from `from`, and the time after the last. */
function feed(deadline: AdaptiveDeadline, from: number, count: number, rttMs: number, jitter: number, everyMs = 0.4, spikeEvery = 0, spikeMs = 0): number {
  let at = from;
  for (let i = 0; i < count; i++) {
    const wobble = (((i * 7919) % 101) / 50 - 1) * jitter;
    const spiked = spikeEvery > 0 && i % spikeEvery === spikeEvery - 1;
    deadline.answered(rttMs + wobble + (spiked ? spikeMs : 0), at);
    at += everyMs;
  }
  return at;
}

test('on loopback (0.2-0.5 ms round trips) it stays at the floor', () => {
  const deadline = new AdaptiveDeadline(0);
  const at = feed(deadline, 0, 50_000, 0.3, 0.2);
  assert.equal(deadline.msAt(at), floorMs);
});

test('at 2 ms ±20 % it stays at the floor: twice the longest round trip is below 5 ms', () => {
  const deadline = new AdaptiveDeadline(0);
  const at = feed(deadline, 0, 50_000, 2, 0.4);
  assert.equal(deadline.msAt(at), floorMs);
});

test('at 2 ms with 10 ms spikes on 1 % of the answers it rises above the spikes, and no further than twice them', () => {
  const deadline = new AdaptiveDeadline(0);
  const at = feed(deadline, 0, 20_000, 2, 0.4, 0.4, 100, 10);
  const ms = deadline.msAt(at);
  assert.ok(ms > 12.4, `a spiked round trip (up to 12.4 ms) fits in the deadline: ${ms} ms`);
  assert.ok(ms <= 2 * 12.4 + 0.1, `twice the longest: ${ms} ms`);
});

test('one spike raises it at once: the next call is given the longer deadline', () => {
  const deadline = new AdaptiveDeadline(0);
  feed(deadline, 0, 1000, 2, 0.4);
  assert.equal(deadline.msAt(400), floorMs);
  deadline.answered(11, 400);
  assert.equal(deadline.msAt(400.1), 22);
});

test('a spike is forgotten once the window has passed it, slot by slot', () => {
  const deadline = new AdaptiveDeadline(0);
  deadline.answered(12, 10);
  deadline.answered(8, slotMs + 10);
  assert.equal(deadline.msAt(windowMs - 1), 24, 'remembered for the window');
  assert.equal(deadline.msAt(windowMs + 1), 16, 'the first slot gone: the later, shorter spike is what is left');
  assert.equal(deadline.msAt(windowMs + slotMs + 1), floorMs, 'both gone: back at the floor');
});

test('after a long quiet spell (no calls) it starts again from the floor', () => {
  const deadline = new AdaptiveDeadline(0);
  deadline.answered(20, 1);
  assert.equal(deadline.msAt(2), 40);
  assert.equal(deadline.msAt(50 * windowMs), floorMs);
  deadline.answered(3, 50 * windowMs + 1);
  assert.equal(deadline.msAt(50 * windowMs + 2), 6);
});

test('a silence longer than the ceiling is no sample: a paused Redis never lifts the deadline', () => {
  const deadline = new AdaptiveDeadline(0);
  for (let i = 0; i < 100; i++) deadline.answered(ceilingMs + 1 + i * 100, i);
  assert.equal(deadline.msAt(100), floorMs);
});

test('silences up to the ceiling raise it to the ceiling at most', () => {
  const deadline = new AdaptiveDeadline(0);
  deadline.answered(ceilingMs, 1);
  assert.equal(deadline.msAt(2), ceilingMs);
  deadline.answered(ceilingMs * 0.9, 3);
  assert.equal(deadline.msAt(4), ceilingMs);
});

test('nonsense samples (negative, NaN) are ignored', () => {
  const deadline = new AdaptiveDeadline(0);
  deadline.answered(-5, 1);
  deadline.answered(Number.NaN, 2);
  assert.equal(deadline.msAt(3), floorMs);
});

test('its bounds and factor can be given; invalid ones are refused', () => {
  const deadline = new AdaptiveDeadline(0, { floorMs: 1, ceilingMs: 10, factor: 3 });
  deadline.answered(2, 1);
  assert.equal(deadline.msAt(2), 6);
  deadline.answered(9, 3);
  assert.equal(deadline.msAt(4), 10);
  assert.throws(() => new AdaptiveDeadline(0, { floorMs: 10, ceilingMs: 5 }), RangeError);
  assert.throws(() => new AdaptiveDeadline(0, { factor: 0.5 }), RangeError);
});

test('a fixed deadline (store.deadlineMs) ignores every sample', () => {
  const deadline = new FixedDeadline(5);
  deadline.answered();
  assert.equal(deadline.msAt(), 5);
  assert.equal(deadline.adaptive, false);
});
