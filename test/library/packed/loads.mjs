// Which packages, besides sluice, a library user's steps load: the ES modules
// resolved (trace-hooks.mjs) and the CommonJS modules in require's cache
// (where the packages sluice loads on first use also land). Prints
// {step: [package, …]}, each step's list including the steps before it.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const resolved = join(tmpdir(), `sluice-loads-${process.pid}.txt`);
writeFileSync(resolved, '');
register('./trace-hooks.mjs', import.meta.url, { data: resolved });
const required = createRequire(import.meta.url).cache;

function packagesLoaded() {
  const files = [...readFileSync(resolved, 'utf8').split('\n'), ...Object.keys(required)];
  const names = files.map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]).filter((name) => name !== undefined && name !== 'sluice');
  return [...new Set(names)].sort();
}

const steps = {};
const sluice = await import('sluice');
steps.import = packagesLoaded();
await import('sluice/express');
await import('sluice/fastify');
steps.adapters = packagesLoaded();
const limiter = sluice.createLimiter({ policy: 'token_bucket', capacity: 2, refillPerSecond: 1 });
await limiter.consume('user-42');
steps.memory = packagesLoaded();
const engine = sluice.createEngine({ redis: { url: process.argv[2] } });
await sluice.createLimiter({ policy: 'gcra', capacity: 2, refillPerSecond: 1 }, engine).consume('user-42');
await engine.close();
steps.redis = packagesLoaded();
rmSync(resolved);
process.stdout.write(`${JSON.stringify(steps)}\n`);
