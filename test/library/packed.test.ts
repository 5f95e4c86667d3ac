// The package as a new user gets it: `npm pack`, the tarball unpacked into a
// fresh project's node_modules (its dependencies linked from this checkout's:
// tests download nothing), then ESM and CommonJS services on Fastify and
// Express against a real redis-server that is paused and then killed, plain
// scripts that must exit by themselves after close(), and TypeScript's node10
// and nodenext resolution. Nothing waits on a clock: a request that waited for
// the paused Redis would hang the test until its timeout.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, type Reply } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(import.meta.dirname, 'packed');

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  assert.equal(result.status, 0, `${command} ${args.join(' ')}:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

/** A fresh project with the packed tarball in node_modules/sluice, its dependencies and peers linked. */
function project(dir: string): string {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', dir], ROOT)) as { filename: string }[];
  const modules = join(dir, 'project', 'node_modules');
  mkdirSync(modules, { recursive: true });
  run('tar', ['-xzf', join(dir, packed[0]!.filename), '-C', modules], dir);
  renameSync(join(modules, 'package'), join(modules, 'sluice'));
  const manifest = JSON.parse(readFileSync(join(modules, 'sluice', 'package.json'), 'utf8')) as Record<string, Record<string, string>>;
  const linked = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {}), '@types/node'];
  for (const name of linked) {
    mkdirSync(dirname(join(modules, name)), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
  }
  const cwd = join(dir, 'project');
  writeFileSync(join(cwd, 'package.json'), '{ "name": "probe", "version": "1.0.0", "private": true }\n');
  for (const file of ['app.mjs', 'app.cjs', 'script.mjs', 'script.cjs', 'types.ts']) copyFileSync(join(FIXTURES, file), join(cwd, file));
  return cwd;
}

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
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-packed-'));
    cwd = project(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

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

  it('TypeScript finds the types with node10 (typesVersions) and nodenext resolution', () => {
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const common = ['--noEmit', '--strict', '--skipLibCheck', '--types', 'node', 'types.ts'];
    run(process.execPath, [tsc, '--module', 'commonjs', '--moduleResolution', 'node10', ...common], cwd);
    run(process.execPath, [tsc, '--module', 'nodenext', '--moduleResolution', 'nodenext', ...common], cwd);
  });
});
