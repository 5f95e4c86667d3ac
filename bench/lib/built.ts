// The benches measure what users run: the compiled package in dist/, not the
// sources through tsx (a server's own small file still loads through tsx; the
// package it imports is not transformed). tsx's esbuild transform keeps function
// names with a `__name(fn, "name")` call for every named closure made, so code
// that makes closures per request pays for it on every request (side by side,
// Sluice's gateway under tsx cost 6-22 % more CPU per request than its dist/,
// one run of 5 rounds).
// The bench's own process makes sure dist/ is not older than src/ (building
// it when it is), once, before it starts any server; the servers import from it.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Written by every build (the build empties dist/ first). */
const BUILT_MARK = join(ROOT, 'dist', 'app.js');

let checked = false;

/** Builds the package when dist/ is missing or older than a file of src/; at most once per process. */
export function ensureBuilt(): void {
  if (checked) return;
  const builtAt = mtimeOf(BUILT_MARK);
  if (builtAt === undefined || newestUnder(join(ROOT, 'src')) > builtAt) {
    const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`the benches run the built package, and \`npm run build\` failed:\n${build.stdout}${build.stderr}`);
  }
  checked = true;
}

/** A module of the built package, typed as its source: `fromDist<typeof import('../../src/app.js')>('app.js')`. */
export function fromDist<T>(path: string): Promise<T> {
  return import(new URL(`../../dist/${path}`, import.meta.url).href) as Promise<T>;
}

function mtimeOf(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}
