// Compiles src/, test/, bench/ and scripts/ (the TypeScript tests import) once, for a test run, into a mirror of the checkout that the test
// processes load as plain JavaScript. Without it every test process loads tsx, whose loader
// hooks resolve and look up each of a few hundred modules again in that process: the cost that
// dominated a short int file. The mirror keeps every path a test uses:
//   - each foo.ts has its compiled foo.js beside it (imports already name ./foo.js), and the
//     .ts itself as a link, so a test that reads or walks sources still finds them;
//   - every other file of those folders (Lua, JSON, protos, the dashboard's UI) is a link;
//   - every other top-level entry (package.json, node_modules, docs, examples, migrations...)
//     is a link, so `new URL('../../examples/x', import.meta.url)` lands where it did.
// Child processes a test starts (`node --import tsx src/cli/main.ts`) run from the checkout
// itself, the runner's working directory, as before.
// Usage: node scripts/build-tests.mjs → prints the mirror's folder (a new one under the OS
// temp folder; run-tests.mjs removes its own at the end, a caller of this script its).
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';

const COMPILED = ['src', 'test', 'bench', 'scripts'];
const SKIPPED = new Set(['.git', ...COMPILED]);

/** Links every file under dir into the mirror (folders made on the way) and collects its .ts sources. */
function mirrorTree(root, out, dir, sources) {
  mkdirSync(join(out, dir), { recursive: true });
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) mirrorTree(root, out, path, sources);
    else {
      symlinkSync(join(root, path), join(out, path));
      if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) sources.push(join(root, path));
    }
  }
}

export function buildTests(root = process.cwd()) {
  root = resolve(root);
  // A folder of its own per run: two runs at once (two checkouts, or one run inside another's
  // test) never rebuild under each other's feet.
  const out = mkdtempSync(join(tmpdir(), 'sluice-tests-'));
  for (const entry of readdirSync(root)) if (!SKIPPED.has(entry)) symlinkSync(join(root, entry), join(out, entry));
  const sources = [];
  for (const dir of COMPILED) mirrorTree(root, out, dir, sources);
  // Module by module (no bundle), so each file keeps its own import.meta.url; inline source maps
  // point a failure's stack at the .ts line.
  buildSync({
    entryPoints: sources,
    outdir: out,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'warning',
  });
  return { out, files: sources.length, remove: () => rmSync(out, { recursive: true, force: true }) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) console.log(buildTests().out);
