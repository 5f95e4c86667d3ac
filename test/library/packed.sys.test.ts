// The package as a new user gets it: `npm pack`, the tarball installed into a
// fresh project (packed-project.ts: the tree npm would install, copied from
// this checkout, so tests download nothing), then: the tree holds none of the
// gateway's packages and nothing that builds on install; `import 'sluice'`
// loads no package and a few files of its own (its bundle), a memory limiter
// only zod; ESM and CommonJS services on Fastify and Express against a real
// redis-server that is paused and then killed; plain scripts that must exit by themselves after close();
// TypeScript's node10, node16 and nodenext resolution; the `sluice` command naming
// the gateway's packages to install. Nothing waits on a clock: a request that
// waited for the paused Redis would hang the test until its timeout.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, type Reply } from '../helpers/http-apps.js';
import { buildsOnInstall, hasPackage, type Manifest, namesOf, packedProject, ROOT, run } from './packed-project.js';

/** The most of its own files `import 'sluice'` may load: its bundle and the chunk it shares with the adapters. */
const MAX_ENTRY_FILES = 2;

/** What the test project itself depends on, beside sluice: the adapters' frameworks and Node's types. */
const APP_PACKAGES = ['express', 'fastify', '@types/node'];

interface Child {
  url: string;
  /** Kills the process if it still runs (a failed test leaves nothing behind). */
  kill(): void;
  /** Ends stdin (the app closes itself) and resolves with how the process ended. */
  finish(): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Starts `node file …args` in `cwd` and waits for its `READY <url>` line. */
function startChild(cwd: string, file: string, args: string[]): Promise<Child> {
  const child: ChildProcess = spawn(process.execPath, [file, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const ended = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return new Promise((resolveChild, reject) => {
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      const ready = /^READY (\S+)$/m.exec(stdout);
      if (!ready) return;
      resolveChild({
        url: ready[1]!,
        kill: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        },
        finish: async () => {
          child.stdin!.end();
          return { code: await ended, stdout, stderr };
        },
      });
    });
    void ended.then((code) => reject(new Error(`${file} exited (${code}) before READY:\n${stdout}\n${stderr}`)));
  });
}

function runScript(cwd: string, file: string, url: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [file, url], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

async function assertDownAnswers(url: string): Promise<void> {
  const replies: Record<string, Reply> = {};
  for (const mode of ['fallback', 'open', 'closed']) replies[mode] = await call(`${url}/${mode}`);
  assert.equal(replies.fallback!.status, 200, replies.fallback!.body);
  assert.equal(replies.open!.status, 200);
  assert.equal(replies.closed!.status, 503);
  assert.deepEqual(JSON.parse(replies.closed!.body), { error: 'store_unavailable' });
  for (const reply of Object.values(replies)) assert.doesNotMatch(reply.body, /ioredis|retries|ECONNREFUSED/i);
}

describe('the packed tarball in a fresh project', { timeout: 240_000 }, () => {
  let dir: string;
  let cwd: string;
  let manifest: Manifest;
  let libraryTree: Set<string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-packed-'));
    ({ cwd, manifest, libraryTree } = packedProject(dir, APP_PACKAGES));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('installs the library alone: none of the gateway packages, nothing built on install', () => {
    // @opentelemetry/api is an optional peer for tracing, but prom-client (a dependency of the library) depends on it itself.
    const gatewayOnly = Object.keys(manifest.peerDependencies ?? {}).filter((name) => name !== 'express' && name !== 'fastify' && name !== '@opentelemetry/api');
    assert.ok(gatewayOnly.includes('better-sqlite3') && gatewayOnly.includes('@grpc/grpc-js') && gatewayOnly.includes('pg'), 'the gateway packages are optional peers');
    assert.ok(gatewayOnly.every((name) => manifest.peerDependenciesMeta?.[name]?.optional), 'every gateway peer is optional');
    assert.equal(manifest.optionalDependencies, undefined, 'npm installs optional dependencies by default');
    const installed = namesOf(libraryTree);
    for (const name of gatewayOnly) {
      assert.ok(!installed.has(name), `${name} installed with the library`);
      assert.ok(!hasPackage(cwd, name), `${name} in the project's node_modules`);
    }
    assert.deepEqual([...libraryTree].filter(buildsOnInstall), [], 'no package of the library runs an install script (native build)');
  });

  it("loads no package and a few files of sluice on `import 'sluice'` or the adapters, zod for the first rule, ioredis only for Redis", async () => {
    const redis = await startRedis();
    try {
      const { code, stdout, stderr } = runScript(cwd, 'loads.mjs', redis.url);
      assert.equal(code, 0, stderr);
      const { packages: steps, files } = JSON.parse(stdout) as { packages: Record<string, string[]>; files: Record<string, number> };
      assert.deepEqual(steps.import, []);
      assert.deepEqual(steps.adapters, []);
      assert.deepEqual(steps.memory, ['zod']);
      assert.ok(steps.redis!.includes('ioredis') && steps.redis!.includes('opossum'), steps.redis!.join(' '));
      assert.ok(!steps.redis!.includes('prom-client'), 'prom-client only when metrics are read');
      // The entries are bundled (scripts/bundle-library.mjs): Node reads a few
      // files of sluice, not the engine's ~70 modules one by one, and no step
      // after the imports reads another.
      assert.ok(files.import! <= MAX_ENTRY_FILES, `import 'sluice' loaded ${files.import} files of sluice`);
      assert.equal(files.importData, 0, "import 'sluice' reads no other file of sluice (a Lua script is read on first use)");
      assert.ok(files.adapters! <= MAX_ENTRY_FILES + 3, `the adapters loaded ${files.adapters! - files.import!} more`);
      assert.equal(files.redis, files.adapters, 'a memory and a Redis limiter load no more of sluice');
    } finally {
      await redis.stop();
    }
  });

  it('the sluice command in a library-only install names the gateway packages to install', () => {
    const result = spawnSync(process.execPath, [join('node_modules', 'sluice', 'dist', 'cli', 'main.js'), 'start', '--demo-upstream'], { cwd, encoding: 'utf8' });
    assert.equal(result.status, 1, result.stderr);
    assert.match(result.stderr, /the gateway needs packages that `npm install sluice` leaves out/);
    for (const name of ['yaml', 'undici', 'pg', 'better-sqlite3', '@grpc/grpc-js']) assert.match(result.stderr, new RegExp(`'${name}@\\^`));
  });

  for (const file of ['app.mjs', 'app.cjs']) {
    for (const framework of ['fastify', 'express']) {
      it(`${file} on ${framework}: serves with Redis paused and killed, then exits by itself`, async () => {
        const redis: RedisServer = await startRedis();
        let app: Child | undefined;
        try {
          app = await startChild(cwd, file, [framework, redis.url]);
          const both = [];
          for (let i = 0; i < 3; i++) both.push(await call(`${app.url}/both`));
          assert.deepEqual(both.map((r) => r.status), [200, 200, 429]);
          assert.equal(both[0]!.headers['ratelimit-policy'], '"burst";q=2;w=2000, "daily";q=3;w=86400');
          assert.equal((await call(`${app.url}/closed`)).status, 200, 'healthy: closed admits');
          redis.pause();
          await assertDownAnswers(app.url);
          redis.resume();
          await redis.kill();
          await assertDownAnswers(app.url);
          const { code, stdout, stderr } = await app.finish();
          assert.equal(code, 0, stderr);
          assert.match(stdout, /^CLOSED$/m);
          assert.doesNotMatch(stderr, /Unhandled error event|ioredis/i);
        } finally {
          app?.kill();
          await redis.stop();
        }
      });
    }
  }

  it('plain scripts (ESM on createEngine, CommonJS on a RedisStore) exit after close()', async () => {
    const redis = await startRedis();
    try {
      for (const file of ['script.mjs', 'script.cjs']) {
        const { code, stdout, stderr } = runScript(cwd, file, redis.url);
        assert.equal(code, 0, `${file}: ${stderr}`);
        assert.deepEqual(JSON.parse(stdout.trim().split('\n').at(-1)!), [[true, 'redis'], [true, 'redis'], [false, 'redis'], [true, 'redis']]);
        await redis.restart(); // a fresh, empty server for the next script
      }
    } finally {
      await redis.stop();
    }
  });

  it('TypeScript finds the types with node10 (typesVersions), node16 and nodenext resolution', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const common = ['--noEmit', '--strict', '--skipLibCheck', '--types', 'node', 'types.ts'];
    run(process.execPath, [tsc, '--module', 'commonjs', '--moduleResolution', 'node10', ...common], cwd);
    run(process.execPath, [tsc, '--module', 'nodenext', '--moduleResolution', 'nodenext', ...common], cwd);
    // types.ts is CommonJS here (the project has no "type"): under node16 it needs the `require` condition's .d.cts (TS1479 without)
    run(process.execPath, [tsc, '--module', 'node16', '--moduleResolution', 'node16', ...common], cwd);
  });
});
