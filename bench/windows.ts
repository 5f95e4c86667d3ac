// npm run bench:windows [-- --quick]
// How far each windowed policy strays from an exact sliding window, in
// simulated time (no Redis: the pure models are the policies). The same rows
// are part of the accuracy bench (bench/accuracy.ts) and its report.
import { isMain } from './lib/cleanup.js';
import { parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';
import { type WindowStrayRow, windowStrayRows } from './lib/window-stray.js';

export function runWindowStray(quick: boolean): WindowStrayRow[] {
  return windowStrayRows({ clients: pick({ quick, out: '' }, 200, 2000), spanMs: pick({ quick, out: '' }, 600_000, 1_800_000), limit: 100, windowMs: 60_000 });
}

export function printWindowStray(rows: WindowStrayRow[]): string {
  return textTable(
    ['trace', 'policy', 'clients', 'requests', 'admitted', 'vs exact log', 'worst window', 'p99 client worst', 'over %', 'wrongly refused %'],
    rows.map((r) => [r.trace, r.policy, r.clients, r.requests, r.admitted, r.vsExactLog, r.worstWindow, r.p99ClientWorstWindow, r.overPercent, r.wronglyRefusedPercent]),
  );
}

if (isMain(import.meta.url)) {
  const started = performance.now();
  const rows = runWindowStray(parseOptions().quick);
  console.log(`limit 100 per 60 s; judged against an exact sliding window over each policy's own admissions (${Math.round(performance.now() - started)} ms)`);
  console.log(printWindowStray(rows));
}
