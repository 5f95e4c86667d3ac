// The streamed path's rows of `npm run bench:gateway` (alone: tsx
// bench/gateway-stream.ts [--quick]): a 10 MB `text/event-stream` answer (1 KiB
// events in 16 KiB writes, its usage in the last event) fetched whole, one
// stream at a time, from the upstream alone, through nginx as a plain proxy
// (when installed), and through Sluice on the memory store with usage parsing
// off (the route's limit charges 1 a request) and on (the limit priced by the
// last event's `usage.total_tokens`, every chunk scanned on its way). Per
// target: the time to the first byte of the body, the throughput, and the CPU
// of the proxy's process per MB relayed (the upstream's own for its row).
// Targets run in turn, repeated; medians.
import { request as httpRequest, Agent } from 'node:http';
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { type Figure, figure, showFigure } from './lib/figure.js';
import { median, round } from './lib/latency.js';
import { binaryExists, NGINX_PLAIN, startNginx } from './lib/native-peers.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';

const STREAM_BYTES = 10 * 1024 * 1024;
const CHUNK_BYTES = 16 * 1024;
const MB = 1_000_000;
const UPSTREAM = 'upstream alone';
const OFF = 'Sluice, memory store, usage parsing off';
const ON = 'Sluice, memory store, usage parsing on';

export interface StreamRow {
  target: string;
  ttfbMs: Figure;
  mbPerSec: Figure;
  cpuMsPerMb: Figure;
  /** Streams that did not end with the usage event and [DONE], or failed. */
  broken: number;
}

export interface StreamResult {
  rows: StreamRow[];
  repeats: number;
  streamsPerRun: number;
  skipped: string[];
  notes: string[];
}

interface Sample {
  ttfbMs: number;
  mbPerSec: number;
  cpuMsPerMb: number;
  broken: number;
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One stream fetched whole: the time to its first body byte, its bytes, and whether it ended as the upstream ends it. */
function fetchStream(url: string): Promise<{ ttfbMs: number; totalMs: number; bytes: number; whole: boolean }> {
  return new Promise((resolve, reject) => {
    const began = performance.now();
    let first = 0;
    let bytes = 0;
    let tail = '';
    const req = httpRequest(`${url}/orders`, { agent, headers: { 'x-api-key': 'bench-stream' } }, (res) => {
      res.on('data', (chunk: Buffer) => {
        if (first === 0) first = performance.now();
        bytes += chunk.length;
        if (chunk.length >= 32) tail = chunk.subarray(chunk.length - 32).toString('latin1');
        else tail = (tail + chunk.toString('latin1')).slice(-32);
      });
      res.on('end', () => resolve({ ttfbMs: first - began, totalMs: performance.now() - began, bytes, whole: res.statusCode === 200 && tail.endsWith('data: [DONE]\n\n') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** `streams` streams one after the other through `child`. */
async function measure(child: Child, streams: number): Promise<Sample> {
  const cpu = child.cpuMicros();
  const ttfb: number[] = [];
  let bytes = 0;
  let ms = 0;
  let broken = 0;
  for (let i = 0; i < streams; i++) {
    try {
      const got = await fetchStream(child.url);
      ttfb.push(got.ttfbMs);
      bytes += got.bytes;
      ms += got.totalMs;
      if (!got.whole) broken++;
    } catch {
      broken++;
    }
  }
  const mb = bytes / MB;
  return { ttfbMs: median(ttfb), mbPerSec: mb / (ms / 1000), cpuMsPerMb: (child.cpuMicros() - cpu) / 1000 / mb, broken };
}

export async function runStreamBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<StreamResult> {
  const repeats = pick(options, 1, 5);
  const streams = pick(options, 5, 20);
  const skipped: string[] = [];
  progress('gateway stream: starting a streaming upstream and the proxies');
  const upstream = await forkServer(UPSTREAM, 'stream-upstream.ts', { totalBytes: STREAM_BYTES, chunkBytes: CHUNK_BYTES });
  const children: Child[] = [upstream];
  try {
    if (binaryExists('nginx')) children.push(await startNginx(upstream.url, false));
    else skipped.push('streamed path through nginx: no nginx binary');
    for (const [name, usage] of [[OFF, false], [ON, true]] as const) children.push(await forkServer(name, 'sluice.ts', { upstream: upstream.url, limiter: 'memory', usage }));
    for (const target of children) await measure(target, 2); // warm-up: JIT, pools
    const samples = new Map<string, Sample[]>();
    for (let repeat = 1; repeat <= repeats; repeat++) {
      for (const target of children) {
        progress(`gateway stream: run ${repeat}/${repeats}, ${target.name}`);
        samples.set(target.name, [...(samples.get(target.name) ?? []), await measure(target, streams)]);
      }
    }
    const rows = children.map((target) => rowOf(target.name, samples.get(target.name)!));
    return { rows, repeats, streamsPerRun: streams, skipped, notes: streamNotes(samples) };
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

function rowOf(target: string, runs: Sample[]): StreamRow {
  return {
    target,
    ttfbMs: figure(runs.map((r) => r.ttfbMs)),
    mbPerSec: figure(runs.map((r) => r.mbPerSec)),
    cpuMsPerMb: figure(runs.map((r) => r.cpuMsPerMb)),
    broken: runs.reduce((sum, r) => sum + r.broken, 0),
  };
}

/** Parsing's cost and Sluice against nginx: medians of per-repeat ratios (the runs of a repeat are adjacent). */
function streamNotes(samples: Map<string, Sample[]>): string[] {
  const paired = (a: string, b: string, of: (x: Sample, y: Sample) => number) => {
    const left = samples.get(a) ?? [];
    const right = samples.get(b) ?? [];
    const values = left.slice(0, right.length).map((x, i) => of(x, right[i]!));
    return values.length ? round(median(values), 3) : Number.NaN;
  };
  return [
    `usage parsing on ÷ off, CPU per MB: ${paired(ON, OFF, (x, y) => x.cpuMsPerMb / y.cpuMsPerMb)}; time to first byte: +${paired(ON, OFF, (x, y) => x.ttfbMs - y.ttfbMs)} ms`,
    `Sluice (parsing off) ÷ nginx plain proxy, CPU per MB: ${paired(OFF, NGINX_PLAIN, (x, y) => x.cpuMsPerMb / y.cpuMsPerMb)}; (parsing on) ${paired(ON, NGINX_PLAIN, (x, y) => x.cpuMsPerMb / y.cpuMsPerMb)}`,
    `Streamed rows: a ${STREAM_BYTES / 1024 / 1024} MiB text/event-stream per request (1 KiB events in ${CHUNK_BYTES / 1024} KiB writes), one stream at a time; the client, the upstream and the proxy share the cores.`,
  ];
}

export function printStream(result: StreamResult): string {
  const cells = result.rows.map((r) => [r.target, showFigure(r.ttfbMs, 2), showFigure(r.mbPerSec), showFigure(r.cpuMsPerMb, 2), r.broken]);
  return [
    textTable(['streamed 10 MiB', 'first byte ms', 'MB/s', 'CPU ms/MB', 'broken'], cells),
    `medians (min–max) of ${result.repeats} run(s) of ${result.streamsPerRun} streams`,
    ...result.skipped.map((s) => `skipped: ${s}`),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runStreamBench(parseOptions());
    console.log(['', printStream(result), '', ...result.notes].join('\n'));
  });
}
