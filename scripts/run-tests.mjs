// Runs the test files of the tiers named on the command line with Node's built-in runner
// through tsx. A file's tier is in its name:
//   *.test.ts      unit: no process, no socket; files run in parallel.
//   *.int.test.ts  integration: real redis-server, PostgreSQL and HTTP on loopback; in parallel.
//   *.sys.test.ts  system: Cluster, Sentinel, browsers, nginx, Caddy, worker processes, the
//                  packed package, the bench smoke run and everything that kills or freezes a
//                  process; one file at a time, since their faults are timed against the machine.
// Usage: node scripts/run-tests.mjs unit int [test/some/folder | test/some/file.test.ts ...]
// Paths narrow the run to the files under them (of the tiers named; all tiers if none is).
// Node 20's runner takes no globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, normalize } from 'node:path';

const TIERS = ['unit', 'int', 'sys'];

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) find(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

function tierOf(file) {
  if (file.endsWith('.sys.test.ts')) return 'sys';
  if (file.endsWith('.int.test.ts')) return 'int';
  return 'unit';
}

const args = process.argv.slice(2);
const unknown = args.filter((arg) => !TIERS.includes(arg) && !existsSync(arg));
if (unknown.length > 0) {
  console.error(`run-tests: not a tier (${TIERS.join(', ')}) nor an existing path: ${unknown.join(', ')}`);
  process.exit(2);
}
const tiers = args.filter((arg) => TIERS.includes(arg));
const paths = args.filter((arg) => !TIERS.includes(arg)).map((arg) => normalize(arg));
const chosenTiers = tiers.length > 0 ? tiers : TIERS;
const all = find('test').sort();
const under = (file) => paths.length === 0 || paths.some((path) => file === path || file.startsWith(`${path.replace(/\/$/, '')}/`));

// --test-timeout bounds each file: one that hangs (a promise never settled while a server it
// started keeps the loop alive) fails, named, and the run goes on instead of waiting for CI's
// own limit. The longest file, the bench smoke run, takes a few minutes.
const FILE_TIMEOUT_MS = 10 * 60_000;
let failed = false;
for (const tier of chosenTiers) {
  const files = all.filter((file) => tierOf(file) === tier && under(file));
  if (files.length === 0) continue;
  const concurrency = tier === 'sys' ? 1 : availableParallelism();
  const started = Date.now();
  console.log(`\n# tier ${tier}: ${files.length} files, ${concurrency} at a time`);
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${FILE_TIMEOUT_MS}`, '--test-reporter=spec', ...files],
    { stdio: 'inherit' },
  );
  console.log(`# tier ${tier}: ${result.status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (result.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
