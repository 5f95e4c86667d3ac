// Command-line options shared by every bench: `--quick` for a short run,
// `--out DIR` for where run-all writes the report. A full run's default is the
// committed bench/results; a quick run's figures are not the project's figures,
// so without --out it writes to a fresh temporary folder and never over them.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BenchOptions {
  /** Short durations and fewer repeats: the whole suite in under a minute. */
  quick: boolean;
  /** Directory that receives REPORT.md and results.json, when --out names one. */
  out?: string;
}

export const DEFAULT_OUT = fileURLToPath(new URL('../results/', import.meta.url));

export function parseOptions(argv: string[] = process.argv.slice(2)): BenchOptions {
  const options: BenchOptions = { quick: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--out') {
      const dir = argv[++i];
      if (!dir) throw new Error('--out needs a directory');
      options.out = dir;
    } else if (arg?.startsWith('--out=')) options.out = arg.slice('--out='.length);
    else if (arg === '--') continue;
    else throw new Error(`unknown option ${arg}; expected --quick or --out DIR`);
  }
  return options;
}

/** Where run-all writes its report: --out, else bench/results for a full run, else a new temporary folder. */
export function reportDir(options: BenchOptions): string {
  if (options.out) return options.out;
  return options.quick ? mkdtempSync(join(tmpdir(), 'sluice-bench-quick-')) : DEFAULT_OUT;
}

/** Picks the quick or the full value of a setting. */
export const pick = <T>(options: BenchOptions, quick: T, full: T): T => (options.quick ? quick : full);
