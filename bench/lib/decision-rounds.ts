// The decision bench's faces measured in rounds, every face once per round in
// turn, so a pair of rows (gRPC and forward-auth) is side by side in each
// round; a row is the median of its rounds, the gRPC ÷ forward-auth ratio the
// median of the rounds' ratios (the machine's load moves between rounds).
import type { DecisionRow } from '../decision.js';
import { median, round } from './latency.js';

export function medianRow(samples: readonly DecisionRow[]): DecisionRow {
  const of = (pick: (row: DecisionRow) => number, digits = 1) => round(median(samples.map(pick)), digits);
  const errorKinds: Record<string, number> = {};
  for (const sample of samples) for (const [kind, n] of Object.entries(sample.errorKinds)) errorKinds[kind] = (errorKinds[kind] ?? 0) + n;
  const sluice = of((row) => row.cpuUs.sluice);
  const nginx = of((row) => row.cpuUs.nginx);
  return {
    target: samples[0]!.target,
    perSec: of((row) => row.perSec, 0),
    p50Ms: of((row) => row.p50Ms, 2),
    p99Ms: of((row) => row.p99Ms, 2),
    cpuUs: { sluice, nginx, total: round(sluice + nginx, 1) },
    // counts over every round, so none is hidden by a median
    notOk: samples.reduce((sum, row) => sum + row.notOk, 0),
    errors: samples.reduce((sum, row) => sum + row.errors, 0),
    errorKinds,
  };
}

/** Per round, the first named row's Sluice CPU over the second's; undefined when either is missing. */
export function roundRatios(rounds: readonly DecisionRow[][], over: string, under: string): number[] {
  return rounds.flatMap((rows) => {
    const [a, b] = [rows.find((row) => row.target === over)?.cpuUs.sluice, rows.find((row) => row.target === under)?.cpuUs.sluice];
    return a && b ? [round(a / b, 2)] : [];
  });
}
