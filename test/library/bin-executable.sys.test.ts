// Slow, system: runs the real `npm run build` (which empties dist/ and rewrites it,
// as `npm pack` does) in this checkout, then the `sluice` command the way the
// README runs it. tsc writes dist/cli/main.js without the execute bit, so
// without the build's chmod step `npx sluice` answers "Permission denied".
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, run } from './packed-project.js';

describe('the sluice bin after npm run build', () => {
  it('is executable and `npx --no-install sluice --help` runs', () => {
    run('npm', ['run', 'build'], ROOT);
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    for (const [name, target] of Object.entries(manifest.bin)) {
      assert.notEqual(statSync(join(ROOT, target)).mode & 0o111, 0, `bin ${name} (${target}) has no execute bit`);
    }
    const help = spawnSync('npx', ['--no-install', 'sluice', '--help'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(help.status, 0, `npx sluice --help:\n${help.stdout}\n${help.stderr}`);
    assert.match(help.stdout, /^usage: sluice /m);
  });
});
