// npm run bench:import [-- --quick]
// What a library user pays before the first decision, from the files the
// package's `exports` name (the bundles in dist/; `npm run build` first):
// `import 'sluice'`, the Express adapter alone, zod alone (the first rule
// loads it), and import + createLimiter + one consume on memory, beside
// express-rate-limit (import, and import + rateLimit()) and node:http as the
// floor. Each case in a fresh node, the cases in turns, so a busy machine
// slows them alike; medians of wall and CPU (user + system) ms.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isMain, runMain } from './lib/cleanup.js';
import { parseOptions, pick } from './lib/options.js';
import { textTable } from './lib/table.js';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { exports: Record<string, { import: string }> };
/** The file the package's `exports` give `import` for `entry` ('.', './express'), as a string literal. */
const entry = (name: string) => JSON.stringify(fileURLToPath(new URL(manifest.exports[name]!.import, new URL('../', import.meta.url))));

/** Each case: the code whose cost is timed, in an ES module of its own. */
const CASES: Record<string, string> = {
  'node:http (floor)': `await import('node:http');`,
  "import 'sluice'": `await import(${entry('.')});`,
  "import 'sluice/express'": `await import(${entry('./express')});`,
  // What the first rule loads (src/policies/rule.ts), on its own.
  "import 'zod'": `await import('zod');`,
  'sluice: import + createLimiter + consume': `const { createLimiter } = await import(${entry('.')}); await createLimiter({ policy: 'token_bucket', capacity: 10, refillPerSecond: 1 }).consume('user-42');`,
  "import 'express-rate-limit'": `await import('express-rate-limit');`,
  'express-rate-limit: import + rateLimit()': `const { rateLimit } = await import('express-rate-limit'); rateLimit({ limit: 10, windowMs: 1000 });`,
};

function timed(code: string): { wall: number; cpu: number } {
  const script = `const cpu = process.cpuUsage(), t = performance.now(); ${code} const used = process.cpuUsage(cpu); console.log(JSON.stringify({ wall: performance.now() - t, cpu: (used.user + used.system) / 1000 }));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })) as { wall: number; cpu: number };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export function runImportBench(runs: number): { name: string; wallMs: number; cpuMs: number }[] {
  const samples = Object.fromEntries(Object.keys(CASES).map((name) => [name, [] as { wall: number; cpu: number }[]]));
  for (let i = 0; i < runs; i++) for (const [name, code] of Object.entries(CASES)) samples[name]!.push(timed(code));
  return Object.entries(samples).map(([name, list]) => ({ name, wallMs: median(list.map((s) => s.wall)), cpuMs: median(list.map((s) => s.cpu)) }));
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const runs = pick(parseOptions(), 5, 21);
    const rows = runImportBench(runs);
    const floor = rows[0]!.cpuMs;
    console.log(`${runs} runs of each, in turns\n`);
    console.log(textTable(['case', 'wall ms', 'CPU ms', 'CPU over the floor'], rows.map((r) => [r.name, Number(r.wallMs.toFixed(1)), Number(r.cpuMs.toFixed(1)), Number((r.cpuMs - floor).toFixed(1))])));
  });
}
