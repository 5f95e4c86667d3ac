// Calendar windows on the pure model: the shared vectors (DST both ways in
// Europe/Paris, America/New_York and a zone without midnight, month ends,
// billing anchors 29-31, leap years, weeks, years, clock skew), the refusals
// of bad calendars naming their field, and the memory store deciding a
// calendar rule across a boundary on its own clock.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calendarBoundaries, calendarWindowAt } from '../../src/core/calendar.js';
import { isSluiceError } from '../../src/core/errors.js';
import { type FixedWindowRule, parseRule } from '../../src/policies/rule.js';
import { ruleAt } from '../../src/policies/calendar-rule.js';
import { fixedWindow } from '../../src/policies/fixed-window/model.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { calendarVectors, ruleForStep, ruleOfStep } from './calendar-vectors.js';

describe('calendar vectors on the model', () => {
  for (const vector of calendarVectors()) {
    it(vector.name, () => {
      let state: ReturnType<typeof fixedWindow.step>['state'] | undefined;
      vector.steps.forEach((step, i) => {
        const at = Date.parse(step.at);
        const [start, end] = step.expect.window.map(Date.parse) as [number, number];
        const where = `step ${i} at ${step.at}`;
        assert.deepEqual(calendarWindowAt(at, ruleOfStep(vector, i).calendar!), { start, end }, `window from the time-zone rules, ${where}`);
        const result = fixedWindow.step(state, at, ruleForStep(ruleOfStep(vector, i), step), step.cost);
        if (result.write) state = result.state;
        assert.equal(result.state.start, start * 1000, `window the model picked, ${where}`);
        assert.equal(result.decision.allowed, step.expect.allowed, `allowed, ${where}`);
        assert.equal(result.decision.remaining, step.expect.remaining, `remaining, ${where}`);
        assert.equal(result.decision.resetAfterMs, end - at, `reset: the real time until the window turns, ${where}`);
        assert.equal(result.decision.retryAfterMs, step.expect.allowed ? 0 : end - at, `retry, ${where}`);
        if (result.write) assert.equal(result.ttlMs, end - at, `the state lives until the window turns, ${where}`);
      });
    });
  }
});

describe('calendar boundaries', () => {
  const paris = { unit: 'day', timeZone: 'Europe/Paris' } as const;

  it('holds the nearer neighbour: the window before in its first half, the one after in its second', () => {
    const early = calendarBoundaries(Date.parse('2026-12-03T02:00:00Z'), paris);
    assert.deepEqual(early.boundaries, ['2026-12-01T23:00:00Z', '2026-12-02T23:00:00Z', '2026-12-03T23:00:00Z'].map(Date.parse));
    const late = calendarBoundaries(Date.parse('2026-12-03T20:00:00Z'), paris);
    assert.deepEqual(late.boundaries, ['2026-12-02T23:00:00Z', '2026-12-03T23:00:00Z', '2026-12-04T23:00:00Z'].map(Date.parse));
    assert.equal(late.validFrom, Date.parse('2026-12-03T11:00:00Z'));
    assert.equal(late.validUntil, Date.parse('2026-12-04T11:00:00Z'));
  });

  it('ruleAt attaches them once per half window and passes other rules through', () => {
    const rule = parseRule({ policy: 'fixed_window', limit: 1, calendar: paris });
    const a = ruleAt(rule, Date.parse('2026-12-03T12:00:00Z'));
    assert.notEqual(a, rule);
    assert.equal(ruleAt(rule, Date.parse('2026-12-04T10:59:59Z')), a, 'same boundaries, same object (its Lua arguments stay cached)');
    assert.notEqual(ruleAt(rule, Date.parse('2026-12-04T11:00:00Z')), a);
    assert.equal(ruleAt(a, 0), a, 'a rule already resolved is kept as it is (the vectors pass their own)');
    const plain = parseRule({ policy: 'fixed_window', limit: 1, windowMs: 1000 });
    assert.equal(ruleAt(plain, 0), plain);
  });

  it('a model handed a calendar rule without boundaries says so instead of guessing', () => {
    const rule = parseRule({ policy: 'fixed_window', limit: 1, calendar: paris }) as FixedWindowRule;
    assert.throws(() => fixedWindow.step(undefined, 0, rule, 1), /without its window boundaries/);
  });
});

describe('the memory store decides calendar rules on its own clock', () => {
  it('a monthly quota refused on the last evening of the month is open again at local midnight of the 1st', async () => {
    let now = Date.parse('2026-01-31T22:00:00Z'); // 23:00 in Paris
    const store = new MemoryStore({ now: () => now });
    const rule = parseRule({ policy: 'fixed_window', limit: 2, calendar: { unit: 'month', timeZone: 'Europe/Paris' } });
    const bucket = { tag: 't', name: 'n', key: 'k', hash: 'h', field: 'f' };
    assert.equal((await store.consume(bucket, rule, 2)).allowed, true);
    const refused = await store.consume(bucket, rule, 1);
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterMs, 3_600_000, 'one hour until 1 February 00:00 in Paris');
    now = Date.parse('2026-01-31T23:00:00Z');
    const next = await store.consume(bucket, rule, 1);
    assert.equal(next.allowed, true);
    assert.equal(next.resetAfterMs, 28 * 86_400_000, 'February 2026 is 28 days');
  });
});

describe('bad calendars are refused naming the field', () => {
  const refusal = (input: object): { field?: string; message: string } => {
    try {
      parseRule(input, 'rule');
    } catch (error) {
      assert.ok(isSluiceError(error), String(error));
      return { field: error.field, message: error.message };
    }
    assert.fail(`accepted ${JSON.stringify(input)}`);
  };
  const monthly = (calendar: object, extra: object = {}) => ({ policy: 'fixed_window', limit: 5, calendar: { unit: 'month', timeZone: 'Europe/Paris', ...calendar }, ...extra });
  const cases: [string, object, string, RegExp][] = [
    ['an unknown time zone', monthly({ timeZone: 'Europe/Atlantis' }), 'rule.calendar.timeZone', /unknown time zone/],
    ['an empty time zone', monthly({ timeZone: '' }), 'rule.calendar.timeZone', /unknown time zone/],
    ['an unknown unit', monthly({ unit: 'fortnight' }), 'rule.calendar.unit', /./],
    ['a month anchor of 0', monthly({ anchor: 0 }), 'rule.calendar.anchor', /1-31 for unit month/],
    ['a month anchor of 32', monthly({ anchor: 32 }), 'rule.calendar.anchor', /1-31 for unit month/],
    ['a fractional anchor', monthly({ anchor: 1.5 }), 'rule.calendar.anchor', /integer/],
    ['a week anchor of 8', monthly({ unit: 'week', anchor: 8 }), 'rule.calendar.anchor', /1-7 for unit week \(an ISO weekday/],
    ['a year anchor of 13', monthly({ unit: 'year', anchor: 13 }), 'rule.calendar.anchor', /1-12 for unit year/],
    ['an anchor on a day window', monthly({ unit: 'day', anchor: 1 }), 'rule.calendar.anchor', /no anchor/],
    ['an unknown calendar field', monthly({ start: 'monday' }), 'rule.calendar', /unknown field\(s\) start/],
    ['calendar with windowMs', monthly({}, { windowMs: 1000 }), 'rule.windowMs', /cannot be combined with calendar/],
    ['calendar with offsetMs', monthly({}, { offsetMs: 10 }), 'rule.offsetMs', /cannot be combined with calendar/],
    ['calendar with windowStart', monthly({}, { windowStart: 'first_request' }), 'rule.windowStart', /cannot be combined with calendar/],
    ['neither windowMs nor calendar', { policy: 'fixed_window', limit: 5 }, 'rule.windowMs', /is required \(or give calendar/],
    ['calendar on sliding_window_counter', { policy: 'sliding_window_counter', limit: 5, windowMs: 1000, calendar: { unit: 'day', timeZone: 'UTC' } }, 'rule.calendar', /apply to fixed_window only, not sliding_window_counter/],
    ['calendar on token_bucket', { policy: 'token_bucket', capacity: 5, refillPerSecond: 1, calendar: { unit: 'day', timeZone: 'UTC' } }, 'rule.calendar', /fixed_window only/],
  ];
  for (const [name, input, field, message] of cases) {
    it(name, () => {
      const got = refusal(input);
      assert.equal(got.field, field);
      assert.match(got.message, message);
    });
  }

  it('accepts every anchor at the ends of its range', () => {
    for (const [unit, anchor] of [['week', 1], ['week', 7], ['month', 1], ['month', 31], ['year', 1], ['year', 12]] as const) {
      assert.doesNotThrow(() => parseRule(monthly({ unit, anchor })));
    }
  });
});

describe('bad calendars in the config file name the field and the line', () => {
  const yaml = (rule: string) => `routes: [{ id: api, path: /api, upstream: http://127.0.0.1:8090 }]
rules:
  - tenant: acme
    route: api
${rule}
`;
  const cases: [string, string, RegExp][] = [
    ['an unknown time zone', '    policy: fixed_window\n    limit: 5\n    calendar: { unit: month, timeZone: Paris/France }', /calendar\.timeZone: unknown time zone/],
    ['a billing anchor of 0', '    policy: fixed_window\n    limit: 5\n    calendar: { unit: month, timeZone: UTC, anchor: 0 }', /calendar\.anchor: must be 1-31/],
    ['calendar on the sliding log', '    policy: sliding_window_log\n    limit: 5\n    windowMs: 1000\n    calendar: { unit: day, timeZone: UTC }', /calendar: calendar windows apply to fixed_window only, not sliding_window_log/],
  ];
  for (const [name, rule, message] of cases) {
    it(name, () => {
      assert.throws(
        () => parseConfig(yaml(rule), { source: 'sluice.yaml', env: {} }),
        (error: unknown) => error instanceof ConfigError && message.test(error.message) && /sluice\.yaml:\d+/.test(error.message),
      );
    });
  }
});

describe('ruleAt for rule objects made anew per call', () => {
  it('resolves equal calendars to equal boundaries, each rule its own object', () => {
    const make = () => parseRule({ policy: 'fixed_window', limit: 3, calendar: { unit: 'month', timeZone: 'Asia/Tokyo', anchor: 10 } });
    const at = Date.parse('2026-12-04T00:00:00Z');
    const a = ruleAt(make(), at) as ReturnType<typeof make> & { boundaries: readonly number[] };
    const b = ruleAt(make(), at + 1000) as typeof a;
    assert.notEqual(a, b);
    assert.deepEqual(b.boundaries, a.boundaries);
    assert.deepEqual(a.boundaries, ['2026-11-09T15:00:00Z', '2026-12-09T15:00:00Z', '2027-01-09T15:00:00Z'].map(Date.parse));
  });
});
