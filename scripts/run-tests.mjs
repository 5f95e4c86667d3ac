// Runs every test file under test/ with Node's built-in runner through tsx.
// Node 20's runner takes no globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) find(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}
// Node 20 runs each file in its own process and --test-timeout bounds the whole file: one that
// hangs (a promise never settled while a server it started keeps the loop alive) fails, named,
// and the run goes on, instead of waiting until CI's own limit. The longest (bench/run-all --quick) takes ~4 min.
const FILE_TIMEOUT_MS = 10 * 60_000;
const only = process.argv.slice(2);
const files = only.length > 0 ? only : find('test').sort();
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', `--test-timeout=${FILE_TIMEOUT_MS}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
