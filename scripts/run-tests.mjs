// Runs the test files of the tiers named on the command line with Node's built-in runner.
// A file's tier is in its name:
//   *.test.ts      unit: no process, no socket; files run in parallel.
//   *.int.test.ts  integration: real redis-server, PostgreSQL and HTTP on loopback; in parallel,
//                  but for the few files of ALONE, which run one at a time after the others.
//   *.sys.test.ts  system: Cluster, Sentinel, browsers, nginx, Caddy, worker processes, the
//                  packed package, the bench smoke run and everything that kills or freezes a
//                  process; one file at a time, since their faults are timed against the machine.
// Usage: node scripts/run-tests.mjs unit int [test/some/folder | test/some/file.test.ts ...]
// Paths narrow the run to the files under them (of the tiers named; all tiers if none is).
// Node 20's runner takes no globs, so the files are listed here.
//
// The unit and int tiers run compiled JavaScript (scripts/build-tests.mjs: one esbuild pass
// over src/ and test/) rather than loading tsx in each of a few hundred processes, which cost
// more than most files' own tests; TEST_BUILD_DIR names that build to the tests, which start
// the CLI from it too (test/helpers/cli.ts). TEST_WITH_TSX=1 runs the sources through tsx
// as before. The sys tier always runs through tsx: it packs and runs the checkout itself.
// The int tier shares one PostgreSQL (one initdb) among its files, each in a database of its
// own (test/helpers/shared-servers.ts); the runner stops it at the end, on failure or signal.
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, normalize } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildTests } from './build-tests.mjs';

const TIERS = ['unit', 'int', 'sys'];

// Int files whose checks are timed against the clock tightly enough (three hits inside one
// 1-second window, a block's remaining time read to the poll, a route timeout measured to the
// request) that another file loading the second core can fail them: they run alone, after the
// parallel ones. stream-memory too: it samples the process's reachable memory while 100 MiB pass,
// and a stall from the other core's file once let 22 MiB of chunks pile up in flight (margin 16).
const ALONE = [
  'test/decision-service/ratelimit-dropin.int.test.ts',
  'test/gateway/penalty-box.int.test.ts',
  'test/gateway/protocol-edges.int.test.ts',
  'test/usage/stream-memory.int.test.ts',
];

// The slowest int files start first, so no long file begins last and runs on by itself while
// the other core idles. Any order is correct; this one is shorter.
const FIRST = [
  'test/decision-service/ratelimit-command.int.test.ts',
  'test/config/config.int.test.ts',
  'test/gateway/limit-keys.int.test.ts',
  'test/gateway/flow.int.test.ts',
  'test/dashboard/history-memory.int.test.ts',
  'test/decision-service/ratelimit-settings.int.test.ts',
  'test/stores/redis/redis-tls.int.test.ts',
  'test/gateway/plans.int.test.ts',
  'test/process/workers-config.int.test.ts',
];

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
const all = find('test').sort();
// A moved or renamed file must take its place in these lists with it.
const stale = [...ALONE, ...FIRST].filter((file) => !all.includes(file));
if (stale.length > 0) {
  console.error(`run-tests: ALONE or FIRST names files that do not exist: ${stale.join(', ')}`);
  process.exit(2);
}
const tiers = args.filter((arg) => TIERS.includes(arg));
const paths = args.filter((arg) => !TIERS.includes(arg)).map((arg) => normalize(arg));
const chosenTiers = tiers.length > 0 ? tiers : TIERS;
const under = (file) => paths.length === 0 || paths.some((path) => file === path || file.startsWith(`${path.replace(/\/$/, '')}/`));

// --test-timeout bounds each file: one that hangs (a promise never settled while a server it
// started keeps the loop alive) fails, named, and the run goes on instead of waiting for CI's
// own limit. The longest file, the bench smoke run, takes a few minutes.
const FILE_TIMEOUT_MS = 10 * 60_000;
const useBuild = process.env.TEST_WITH_TSX !== '1';
let build;
const shared = [];
let child;

async function stopShared() {
  while (shared.length > 0) await shared.pop().stop().catch(() => {});
}
/** Everything the run started: the shared servers, then the build. */
async function cleanUp() {
  await stopShared();
  build?.remove();
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    child?.kill(signal);
    void cleanUp().finally(() => process.exit(130));
  });
}

/** spec on the terminal; with TEST_TIMES=FILE, each top-level test's time too, into a part file that runNode appends to FILE (the runner truncates its destination). */
const times = process.env.TEST_TIMES;
function reporters() {
  if (!times) return ['--test-reporter=spec'];
  const reporter = pathToFileURL(join(import.meta.dirname, 'test-times.mjs')).href;
  return ['--test-reporter=spec', '--test-reporter-destination=stdout', `--test-reporter=${reporter}`, `--test-reporter-destination=${times}.part`];
}

/** One `node --test` over files, resolving to whether every file passed. */
function runNode(files, concurrency, compiled, env) {
  const loader = compiled ? ['--enable-source-maps'] : ['--import', 'tsx'];
  const list = compiled ? files.map((file) => join(build.out, file.replace(/\.ts$/, '.js'))) : files;
  return new Promise((done) => {
    child = spawn(
      process.execPath,
      [...loader, '--test', `--test-concurrency=${concurrency}`, `--test-timeout=${FILE_TIMEOUT_MS}`, ...reporters(), ...list],
      { stdio: 'inherit', env },
    );
    child.on('exit', (code) => {
      if (times && existsSync(`${times}.part`)) {
        appendFileSync(times, readFileSync(`${times}.part`));
        rmSync(`${times}.part`);
      }
      done(code === 0);
    });
  });
}

/** The int tier's PostgreSQL, started once from the build's own helper. */
async function startSharedPostgres() {
  const { startPostgres } = await import(pathToFileURL(join(build.out, 'test/helpers/postgres.js')).href);
  const server = await startPostgres();
  shared.push(server);
  return server;
}

let failed = false;
try {
  for (const tier of chosenTiers) {
    const files = all.filter((file) => tierOf(file) === tier && under(file));
    if (files.length === 0) continue;
    const started = Date.now();
    const compiled = useBuild && tier !== 'sys';
    if (compiled && !build) {
      build = buildTests();
      console.log(`# compiled ${build.files} files into ${build.out} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    const env = { ...process.env, ...(compiled ? { TEST_BUILD_DIR: build.out } : {}) };
    if (tier === 'int' && compiled) env.TEST_POSTGRES_URL = (await startSharedPostgres()).url;
    const alone = tier === 'int' ? files.filter((file) => ALONE.includes(file)) : [];
    const first = FIRST.filter((file) => files.includes(file));
    const parallel = [...first, ...files.filter((file) => !alone.includes(file) && !first.includes(file))];
    const concurrency = tier === 'sys' ? 1 : availableParallelism();
    console.log(`\n# tier ${tier}: ${files.length} files, ${concurrency} at a time${alone.length > 0 ? ` (${alone.length} alone after)` : ''}`);
    let passed = parallel.length === 0 || (await runNode(parallel, concurrency, compiled, env));
    if (alone.length > 0) passed = (await runNode(alone, 1, compiled, env)) && passed;
    await stopShared();
    console.log(`# tier ${tier}: ${passed ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    if (!passed) failed = true;
  }
} finally {
  await cleanUp();
}
process.exit(failed ? 1 : 0);
