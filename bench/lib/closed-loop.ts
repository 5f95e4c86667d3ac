// A closed-loop load: `concurrency` callers, each awaiting one operation at a
// time for `durationMs`. Decisions/s is completed operations over wall time.
import { type LatencySummary, LatencyRecorder, round } from './latency.js';

export interface ClosedLoopResult {
  concurrency: number;
  ops: number;
  errors: number;
  opsPerSec: number;
  latency: LatencySummary;
}

export async function runClosedLoop(
  concurrency: number,
  durationMs: number,
  op: (seq: number) => Promise<unknown>,
): Promise<ClosedLoopResult> {
  const recorder = new LatencyRecorder();
  let seq = 0;
  let errors = 0;
  const start = performance.now();
  const end = start + durationMs;
  const caller = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        await op(seq++);
      } catch {
        errors++;
      }
      recorder.recordMs(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsed = performance.now() - start;
  const latency = recorder.summary();
  return { concurrency, ops: latency.count, errors, opsPerSec: round((latency.count / elapsed) * 1000), latency };
}
