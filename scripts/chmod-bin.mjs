// Makes every `bin` target of package.json executable. The build empties dist/ and
// tsc writes files without the execute bit, so after `npm run build` (which
// `npm pack` runs too) `npx sluice` would answer "Permission denied".
import { chmodSync, readFileSync, statSync } from 'node:fs';

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
const bins = typeof manifest.bin === 'string' ? [manifest.bin] : Object.values(manifest.bin ?? {});
for (const target of bins) chmodSync(target, statSync(target).mode | 0o111);
