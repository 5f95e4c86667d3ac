// Which packages, besides sluice, a library user's steps load, and how many
// of sluice's own files: the ES modules resolved (trace-hooks.mjs) and the
// CommonJS modules in require's cache (where the packages sluice loads on
// first use also land). Prints {packages: {step: [package, …]}, files:
// {step: count}, importData: files of sluice `import 'sluice'` read as data},
// each step's figures including the steps before it.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import { createRequire, register, syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const resolved = join(tmpdir(), `sluice-loads-${process.pid}.txt`);
writeFileSync(resolved, '');
register('./trace-hooks.mjs', import.meta.url, { data: resolved });
const required = createRequire(import.meta.url).cache;
// Files of sluice read as data (a Lua script, say), not loaded as modules.
const readAsData = new Set();
const realReadFileSync = fs.readFileSync;
fs.readFileSync = function readFileSyncTraced(path, ...rest) {
  const name = path instanceof URL ? fileURLToPath(path) : String(path);
  if (name.includes('/node_modules/sluice/')) readAsData.add(name);
  return realReadFileSync.call(this, path, ...rest);
};
syncBuiltinESMExports();

const loaded = () =>
  [...readFileSync(resolved, 'utf8').split('\n'), ...Object.keys(required)].map((file) => (file.startsWith('file:') ? fileURLToPath(file) : file));

function packagesLoaded() {
  const names = loaded().map((file) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1]).filter((name) => name !== undefined && name !== 'sluice');
  return [...new Set(names)].sort();
}

/** sluice's own modules loaded so far (each file once, however often resolved). */
const ownFiles = () => new Set(loaded().filter((file) => file.includes('/node_modules/sluice/'))).size;

const steps = {};
const files = {};
const sluice = await import('sluice');
steps.import = packagesLoaded();
files.import = ownFiles();
files.importData = readAsData.size;
await import('sluice/express');
await import('sluice/fastify');
steps.adapters = packagesLoaded();
files.adapters = ownFiles();
const limiter = sluice.createLimiter({ policy: 'token_bucket', capacity: 2, refillPerSecond: 1 });
await limiter.consume('user-42');
steps.memory = packagesLoaded();
files.memory = ownFiles();
const engine = sluice.createEngine({ redis: { url: process.argv[2] } });
await sluice.createLimiter({ policy: 'gcra', capacity: 2, refillPerSecond: 1 }, engine).consume('user-42');
await engine.close();
steps.redis = packagesLoaded();
files.redis = ownFiles();
rmSync(resolved);
process.stdout.write(`${JSON.stringify({ packages: steps, files })}\n`);
