// Declarations for CommonJS users of the package's entries (the `require`
// condition's types): TypeScript under `moduleResolution: node16` refuses an
// ES module's .d.ts in a CommonJS file (TS1479), though Node loads the bundle
// there through require(esm). Each .d.ts an entry reaches is copied to a .d.cts
// beside it, its relative `./x.js` specifiers turned into `./x.cjs`, so the
// whole tree reads as CommonJS declarations; the .d.ts no entry reaches get none.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ENTRIES = ['dist/index.d.ts', 'dist/adapters/express.d.ts', 'dist/adapters/fastify.d.ts'];
const RELATIVE = /((?:from|import\()\s*)(['"])(\.{1,2}\/[^'"]+?)\.js\2/g;

const seen = new Set();
const queue = [...ENTRIES];
while (queue.length > 0) {
  const file = queue.pop();
  if (seen.has(file)) continue;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(RELATIVE)) {
    const target = join(dirname(file), `${match[3]}.d.ts`);
    if (!existsSync(target)) throw new Error(`${file}: ${match[3]}.js has no declaration ${target}`);
    queue.push(target);
  }
  writeFileSync(file.replace(/\.d\.ts$/, '.d.cts'), text.replace(RELATIVE, '$1$2$3.cjs$2'));
}
