// Bundles the library's entries (the package root and the two adapters) from
// the compiled dist/ into dist/bundle/, which the package's `exports` point
// at: Node then reads a few files for `import 'sluice'` instead of the ~70
// modules of the engine one by one (docs/library.md#weight). Every other
// package stays external, loaded on first use as before; the CLI and the
// gateway keep running from dist/'s own files. A shared chunk holds what the
// entries have in common, so `sluice` and `sluice/express` share one engine.
import { readFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';
import { build } from 'esbuild';

const OUT = 'dist/bundle';

// A module that finds its Lua twin (or anything else) through
// `new URL(path, import.meta.url)` must still resolve it from its own place in
// dist/, not from the bundle's: its import.meta.url becomes that place.
const ownUrl = {
  name: 'own-import-meta-url',
  setup(bundler) {
    bundler.onLoad({ filter: /[/\\]dist[/\\].*\.js$/ }, async ({ path }) => {
      const source = await readFile(path, 'utf8');
      const place = relative(OUT, path).split('\\').join('/');
      const contents = source.replaceAll('import.meta.url', `new URL(${JSON.stringify(place)}, import.meta.url).href`);
      return { contents, loader: 'js', resolveDir: dirname(path) };
    });
  },
};

await build({
  entryPoints: { index: 'dist/index.js', express: 'dist/adapters/express.js', fastify: 'dist/adapters/fastify.js' },
  outdir: OUT,
  chunkNames: 'shared-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  // Maps back to src/*.ts through tsc's maps, like dist/'s own (which do not embed the sources either).
  sourcemap: true,
  sourcesContent: false,
  plugins: [ownUrl],
  logLevel: 'warning',
});
