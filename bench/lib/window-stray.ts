// How far each policy strays from an exact sliding window (docs/policies.md,
// "How far each policy strays"). Sluice's pure models are replayed in simulated
// time over seeded client traces, and each policy is judged against an exact
// sliding window of the same limit run over that policy's own admissions:
// - worst window: the most admissions any client got in one window (the limit is
//   the exact figure; more is over-admission);
// - over: admissions an exact window would have refused at that instant;
// - wrongly refused: refusals an exact window over the admissions so far would
//   have admitted (a share of all refusals, which only clients above their
//   limit get).
import type { Rule } from '../../src/policies/rule.js';
import { parseRule } from '../../src/policies/rule.js';
import { policyOf } from '../../src/policies/index.js';
import { seededRandom, type TraceName, TRACES, traceOf } from './window-traces.js';

export interface WindowStrayRow {
  trace: TraceName;
  policy: string;
  clients: number;
  requests: number;
  admitted: number;
  /** The most admissions one client got in any window of windowMs. */
  worstWindow: number;
  /** The 99th percentile over clients of each one's worst window. */
  p99ClientWorstWindow: number;
  /** Admissions beyond an exact window, % of admissions. */
  overPercent: number;
  /** Refusals an exact window over the policy's own admissions would have admitted, % of refusals. */
  wronglyRefusedPercent: number;
  /** Admitted ÷ what the exact sliding log admitted on the same trace: how much more (or less) it lets through in all. */
  vsExactLog: number;
}

export interface WindowStrayOptions {
  clients: number;
  spanMs: number;
  limit: number;
  windowMs: number;
  seed?: number;
}

/** The policies judged, each with the same limit over the same window (the buckets: capacity = limit, refilled over the window). */
export function strayRules(limit: number, windowMs: number): { name: string; rule: Rule }[] {
  const perSecond = (limit * 1000) / windowMs;
  return [
    { name: 'sliding_window_counter', rule: parseRule({ policy: 'sliding_window_counter', limit, windowMs }) },
    { name: 'fixed_window', rule: parseRule({ policy: 'fixed_window', limit, windowMs }) },
    { name: 'fixed_window first_request', rule: parseRule({ policy: 'fixed_window', limit, windowMs, windowStart: 'first_request' }) },
    { name: 'sliding_window_log', rule: parseRule({ policy: 'sliding_window_log', limit, windowMs }) },
    { name: 'token_bucket (capacity = limit)', rule: parseRule({ policy: 'token_bucket', capacity: limit, refillPerSecond: perSecond }) },
  ];
}

interface ClientOutcome {
  admitted: number;
  refused: number;
  over: number;
  wronglyRefused: number;
  worstWindow: number;
}

/** One client's trace through one policy, judged against an exact window over its admissions. */
function replay(rule: Rule, times: number[], startMs: number, limit: number, windowMs: number): ClientOutcome {
  const model = policyOf(rule).model;
  const admittedAt: number[] = [];
  let oldest = 0; // index of the oldest admission still inside the window ending now
  let state: unknown;
  const out: ClientOutcome = { admitted: 0, refused: 0, over: 0, wronglyRefused: 0, worstWindow: 0 };
  for (const offset of times) {
    const now = startMs + offset;
    while (oldest < admittedAt.length && (admittedAt[oldest] as number) <= now - windowMs) oldest++;
    const inWindow = admittedAt.length - oldest;
    const step = model.step(state, now, rule, 1);
    if (step.write) state = step.state;
    if (step.decision.allowed) {
      admittedAt.push(now);
      out.admitted++;
      if (inWindow >= limit) out.over++;
      out.worstWindow = Math.max(out.worstWindow, inWindow + 1);
    } else {
      out.refused++;
      if (inWindow < limit) out.wronglyRefused++;
    }
  }
  return out;
}

const percent = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100);

export function windowStrayRows(options: WindowStrayOptions): WindowStrayRow[] {
  const { clients, spanMs, limit, windowMs } = options;
  const rows: WindowStrayRow[] = [];
  for (const [traceIndex, trace] of TRACES.entries()) {
    const random = seededRandom((options.seed ?? 1) * 1000 + traceIndex);
    // Each client starts at its own instant, so clock-aligned windows fall anywhere in its traffic.
    const traces = Array.from({ length: clients }, () => ({ startMs: 1_700_000_000_000 + Math.floor(random() * windowMs * 10), times: traceOf(trace, { limitRatePerMs: limit / windowMs, spanMs }, random) }));
    const requests = traces.reduce((sum, client) => sum + client.times.length, 0);
    for (const { name, rule } of strayRules(limit, windowMs)) {
      const outcomes = traces.map((client) => replay(rule, client.times, client.startMs, limit, windowMs));
      const total = (pick: (o: ClientOutcome) => number) => outcomes.reduce((sum, o) => sum + pick(o), 0);
      const worst = outcomes.map((o) => o.worstWindow).sort((a, b) => a - b);
      rows.push({
        trace,
        policy: name,
        clients,
        requests,
        admitted: total((o) => o.admitted),
        worstWindow: worst[worst.length - 1] ?? 0,
        p99ClientWorstWindow: worst[Math.min(worst.length - 1, Math.floor(worst.length * 0.99))] ?? 0,
        overPercent: percent(total((o) => o.over), total((o) => o.admitted)),
        wronglyRefusedPercent: percent(total((o) => o.wronglyRefused), total((o) => o.refused)),
        vsExactLog: 0,
      });
    }
    const traceRows = rows.filter((row) => row.trace === trace);
    const exact = traceRows.find((row) => row.policy === 'sliding_window_log')?.admitted ?? 0;
    for (const row of traceRows) row.vsExactLog = exact === 0 ? 0 : Math.round((row.admitted / exact) * 1000) / 1000;
  }
  return rows;
}
