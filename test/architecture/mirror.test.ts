// test/ mirrors src/: the tests of src/limiter/fallback/ are in test/limiter/fallback/, so
// `npm test -- test/limiter` runs one folder's tests and a module's tests are found by its
// path. A folder of test/ names a folder of src/, or is one of the few that test no one
// folder: shared helpers, the house rules, docs/, bench/, whole-system runs, the package.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

/** Folders of test/ that mirror no src/ folder, with everything under them. */
const OWN_FOLDERS = ['helpers', 'architecture', 'docs', 'bench', 'e2e', 'library'];

/** Folders under `dir`, as paths relative to test/. */
function folders(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join('test', dir))) {
    const path = dir === '' ? name : join(dir, name);
    if (!statSync(join('test', path)).isDirectory()) continue;
    out.push(path);
    folders(path, out);
  }
  return out;
}

test('every folder of test/ names a folder of src/, or is one of its own', () => {
  const strays = folders('').filter((path) => {
    if (OWN_FOLDERS.includes(path.split('/')[0]!)) return false;
    const source = join('src', path);
    return !existsSync(source) || !statSync(source).isDirectory();
  });
  assert.deepEqual(strays, [], 'move these tests to test/<the src folder they test>/');
});

test('no file lies at the top of test/', () => {
  const loose = readdirSync('test').filter((name) => !statSync(join('test', name)).isDirectory());
  assert.deepEqual(loose, []);
});
