// The tracing rows of `npm run bench:gateway` (alone: tsx bench/gateway-tracing.ts
// [--quick]): Sluice on the memory store with tracing off, on with a 1 %
// sampler (parentbased_traceidratio 0.01) and on at 100 %, exporting over
// OTLP/HTTP to a local sink the bench starts. Saturation and an evenly paced
// 2,500 req/s; CPU µs per request of the gateway process and p99 side by side.
// Targets run in turn, repeated; medians.
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { type Figure, figure, showFigure } from './lib/figure.js';
import { type LoadResult, paced, saturate } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';

const PACED_RATE = 2500;
const OFF = 'Sluice, memory store, tracing off';
const ONE = 'Sluice, memory store, tracing on, 1 % sampled';
const ALL = 'Sluice, memory store, tracing on, 100 % sampled';

export interface TracingRow {
  target: string;
  requestsPerSec: Figure;
  cpuUsPerRequest: Figure;
  pacedP99Ms: Figure;
  pacedCpuUsPerRequest: Figure;
  non2xx: number;
  errors: number;
}

export interface TracingResult {
  rows: TracingRow[];
  repeats: number;
  notes: string[];
}

interface Sample {
  saturated: LoadResult;
  cpuUs: number;
  paced: LoadResult;
  pacedCpuUs: number;
}

async function measure(child: Child, durationMs: number): Promise<Sample> {
  let cpu = child.cpuMicros();
  const saturated = await saturate(child.url, durationMs);
  const cpuUs = (child.cpuMicros() - cpu) / saturated.completed;
  cpu = child.cpuMicros();
  const steady = await paced(child.url, PACED_RATE, durationMs);
  return { saturated, cpuUs, paced: steady, pacedCpuUs: (child.cpuMicros() - cpu) / steady.completed };
}

export async function runTracingBench(options: BenchOptions, upstream: string, progress: (line: string) => void = console.log): Promise<TracingResult> {
  const repeats = pick(options, 1, 5);
  const durationMs = pick(options, 1000, 5000);
  progress('gateway tracing: starting an OTLP sink and three gateways');
  const sink = await forkServer('OTLP sink', 'otlp-sink.ts', {});
  const children: Child[] = [sink];
  try {
    const base = { upstream, limiter: 'memory' };
    const targets: Child[] = [];
    // One at a time: three cold starts at once on a busy machine can outlast a start's 30 s.
    for (const [name, tracing] of [[OFF, undefined], [ONE, 0.01], [ALL, 1]] as const) {
      const target = await forkServer(name, 'sluice.ts', tracing === undefined ? base : { ...base, tracing: { endpoint: sink.url, ratio: tracing } });
      targets.push(target);
      children.push(target);
    }
    for (const target of targets) await saturate(target.url, pick(options, 300, 1000)); // warm-up
    const samples = new Map<string, Sample[]>();
    for (let repeat = 1; repeat <= repeats; repeat++) {
      for (const target of targets) {
        progress(`gateway tracing: run ${repeat}/${repeats}, ${target.name}`);
        samples.set(target.name, [...(samples.get(target.name) ?? []), await measure(target, durationMs)]);
      }
    }
    return { rows: targets.map((target) => rowOf(target.name, samples.get(target.name)!)), repeats, notes: tracingNotes(samples) };
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

function rowOf(target: string, runs: Sample[]): TracingRow {
  return {
    target,
    requestsPerSec: figure(runs.map((r) => r.saturated.requestsPerSec)),
    cpuUsPerRequest: figure(runs.map((r) => r.cpuUs)),
    pacedP99Ms: figure(runs.map((r) => r.paced.p99Ms)),
    pacedCpuUsPerRequest: figure(runs.map((r) => r.pacedCpuUs)),
    non2xx: runs.reduce((sum, r) => sum + r.saturated.non2xx + r.paced.non2xx, 0),
    errors: runs.reduce((sum, r) => sum + r.saturated.errors + r.paced.errors, 0),
  };
}

/** Each sampler's cost over tracing off: medians of per-repeat ratios and differences (the runs of a repeat are adjacent). */
function tracingNotes(samples: Map<string, Sample[]>): string[] {
  const paired = (a: string, of: (x: Sample, y: Sample) => number) => {
    const left = samples.get(a) ?? [];
    const right = samples.get(OFF) ?? [];
    const values = left.slice(0, right.length).map((x, i) => of(x, right[i]!));
    return values.length ? round(median(values), 3) : Number.NaN;
  };
  const cost = (name: string, label: string) =>
    `tracing ${label} over tracing off: ${paired(name, (x, y) => x.cpuUs / y.cpuUs - 1)} more CPU per request at saturation, ${paired(name, (x, y) => x.pacedCpuUs / y.pacedCpuUs - 1)} paced; ${paired(name, (x, y) => x.saturated.requestsPerSec / y.saturated.requestsPerSec)}× the req/s; ${paired(name, (x, y) => x.paced.p99Ms - y.paced.p99Ms)} ms added p99 paced`;
  return [cost(ONE, '1 %'), cost(ALL, '100 %'), 'Tracing rows: one route, the memory store, spans exported over OTLP/HTTP (protobuf) to a local sink in a process of its own, which shares the cores with the gateways and the load generator.'];
}

export const TRACING_HEADER = ['target', 'req/s', 'CPU µs/req', `p99 ms paced ${PACED_RATE}/s`, 'CPU µs/req paced', 'non-2xx', 'errors'];

export function printTracing(result: TracingResult): string {
  const cells = result.rows.map((r) => [r.target, showFigure(r.requestsPerSec), showFigure(r.cpuUsPerRequest), showFigure(r.pacedP99Ms, 2), showFigure(r.pacedCpuUsPerRequest), r.non2xx, r.errors]);
  return [textTable(TRACING_HEADER, cells), `medians (min–max) of ${result.repeats} run(s)`].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const upstream = await forkServer('upstream alone', 'upstream.ts', {});
    try {
      const result = await runTracingBench(parseOptions(), upstream.url);
      console.log(['', printTracing(result), '', ...result.notes].join('\n'));
    } finally {
      await upstream.stop();
    }
  });
}
