// Command-line options shared by every bench: `--quick` for a short run,
// `--out DIR` for where run-all writes the report (default bench/results).
import { fileURLToPath } from 'node:url';

export interface BenchOptions {
  /** Short durations and fewer repeats: the whole suite in under a minute. */
  quick: boolean;
  /** Directory that receives REPORT.md and results.json. */
  out: string;
}

export const DEFAULT_OUT = fileURLToPath(new URL('../results/', import.meta.url));

export function parseOptions(argv: string[] = process.argv.slice(2)): BenchOptions {
  const options: BenchOptions = { quick: false, out: DEFAULT_OUT };
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

/** Picks the quick or the full value of a setting. */
export const pick = <T>(options: BenchOptions, quick: T, full: T): T => (options.quick ? quick : full);
