// The tiers stay what their names promise: a unit file (*.test.ts, no .int or
// .sys) starts no process and opens no socket, so `npm run test:unit` stays a
// matter of seconds and never depends on a server; a file that freezes or kills
// a real server is system tier, run one at a time.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { test } from 'node:test';

function testFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) testFiles(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

/** What only a process or a socket needs: a unit file imports none of it. */
const SERVER_IMPORTS =
  /^import (?!type )[^;]*from '(?:node:(?:child_process|net|tls|http2?|https|dgram)|ioredis|pg|undici|playwright-core|@grpc\/grpc-js|[./]+helpers\/(?:redis-server|redis-cluster|redis-sentinel|postgres|postgres-db|shared-servers|delay-proxy|delay-proxy-process)\.js)'/m;
const SERVER_CALLS = /\.listen\(|\bfetch\(/;
/** A real server frozen or killed: the system tier's business. */
const FREEZES = /SIGSTOP|SIGKILL|\b(?:redis|server|pg|postgres)\.(?:pause|kill|restart|freeze)\(\)/;

/** A test file's text with that of the test helpers it imports (not for types), followed through. */
function withHelpers(file: string, seen = new Set<string>()): string {
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  let all = text;
  for (const [, spec] of text.matchAll(/^import (?!type )[^;]*from '(\.[^']+)\.js'/gm)) {
    const helper = resolve(dirname(file), `${spec}.ts`);
    if (!helper.startsWith(resolve('test')) || seen.has(helper)) continue;
    try {
      all += withHelpers(helper, seen);
    } catch {
      // not a .ts file of the tests (a fixture): nothing to follow
    }
  }
  return all;
}

const files = testFiles('test');
const unit = files.filter((file) => !/\.(?:int|sys)\.test\.ts$/.test(file));

test('unit-tier files start no process and open no socket', () => {
  const found = unit.filter((file) => {
    const text = withHelpers(file);
    return SERVER_IMPORTS.test(text) || SERVER_CALLS.test(text);
  });
  assert.deepEqual(found, [], 'rename these to *.int.test.ts or *.sys.test.ts');
});

test('files that freeze or kill a real server are system tier', () => {
  const self = join('test', 'architecture', 'tiers.test.ts');
  const found = files.filter((file) => file !== self && !file.endsWith('.sys.test.ts') && FREEZES.test(readFileSync(file, 'utf8')));
  assert.deepEqual(found, [], 'rename these to *.sys.test.ts');
});
