// Helpers for the decision service tests: a Sluice started from
// examples/decision/sluice.yaml (or other YAML) with the decision listeners on
// free ports, a @grpc/grpc-js client built from the same .proto files, and the
// real nginx and Caddy started on free loopback ports from the example files.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import { type RunningSluice, type StartOptions, startSluice } from '../../src/app.js';
import type { Env } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { loadRls } from '../../src/decision-service/proto-files.js';
import { call, silent } from './gateway-support.js';

export const EXAMPLES = resolve('examples/decision');

/** Sluice from YAML text, every listener on a free port; relative paths from examples/decision. */
export function startDecisionSluice(yaml: string, env: Env = {}, options: StartOptions = {}): Promise<RunningSluice> {
  const config = parseConfig(yaml, {
    source: 'test.yaml',
    baseDir: EXAMPLES,
    env: { SLUICE_LISTEN: '127.0.0.1:0', SLUICE_DECISION_LISTEN: '127.0.0.1:0', SLUICE_GRPC_LISTEN: '127.0.0.1:0', ...env },
  });
  return startSluice(config, { logger: silent, shutdownGraceMs: 1_000, ...options });
}

export const exampleSluiceYaml = (): string => readFileSync(join(EXAMPLES, 'sluice.yaml'), 'utf8');

export interface RlsClient {
  ask(request: unknown): Promise<RlsAnswer>;
  close(): void;
}

// biome-ignore lint/suspicious/noExplicitAny: the loaded response is plain data
export type RlsAnswer = any;

export function rlsClient(address: string): RlsClient {
  const { Client } = loadRls();
  const client = new Client(address, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (request: unknown, done: (error: grpc.ServiceError | null, answer: RlsAnswer) => void) => void>;
  return {
    ask: (request) => new Promise((done, fail) => client.ShouldRateLimit!(request, (error, answer) => (error ? fail(error) : done(answer)))),
    close: () => client.close(),
  };
}

/** One descriptor of the given entries. */
/**
 * Waits, if need be, for the top of the clock's next second: a fixed window of
 * one second (the reference's, aligned on the clock) then holds a few quick
 * calls in one window, where calls across its edge would land in two.
 */
export async function atTopOfSecond(): Promise<void> {
  const intoSecond = Date.now() % 1000;
  if (intoSecond > 100) await sleep(1000 - intoSecond + 5);
}

export const descriptor = (...pairs: [string, string][]) => ({ entries: pairs.map(([key, value]) => ({ key, value })) });

/** The seed's curl loop through a proxy: three POST /orders as shop-a. */
export async function threePosts(url: string): Promise<Awaited<ReturnType<typeof call>>[]> {
  const replies = [];
  for (let i = 0; i < 3; i++) replies.push(await call(`${url}/orders`, { method: 'POST', headers: { 'X-Api-Key': 'shop-a-demo-key' } }));
  return replies;
}

export interface RunningProxy {
  readonly url: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** Waits until `url` answers anything at all. */
async function waitForHttp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`proxy exited with ${child.exitCode}: ${log()}`);
    try {
      await call(url);
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error(`proxy did not answer at ${url}: ${log()}`);
}

function owned(child: ChildProcess, dir: string, url: string): RunningProxy {
  return {
    url,
    dir,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // SIGTERM: nginx's master stops its workers too (SIGKILL would orphan them).
        const exited = new Promise((done) => child.once('exit', done));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The real nginx from examples/decision/nginx.conf, its ports substituted, in a temp prefix. */
export async function startNginx(ports: { listen: number; sluice: number; upstream: number }): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-nginx-'));
  mkdirSync(join(dir, 'logs'));
  const conf = readFileSync(join(EXAMPLES, 'nginx.conf'), 'utf8')
    .replace('listen 127.0.0.1:8000;', `listen 127.0.0.1:${ports.listen};`)
    .replace('server 127.0.0.1:8082;', `server 127.0.0.1:${ports.sluice};`)
    .replace('server 127.0.0.1:8090;', `server 127.0.0.1:${ports.upstream};`);
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const errorLog = join(dir, 'logs', 'error.log');
  const child = spawn('/usr/sbin/nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', errorLog, '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${ports.listen}`;
  const log = () => safeRead(errorLog);
  await waitForHttp(`${url}/_probe`, child, log);
  return owned(child, dir, url);
}

/** The real Caddy from examples/decision/Caddyfile, its ports substituted, HOME and data in a temp dir. */
export async function startCaddy(ports: { listen: number; sluice: number; upstream: number }): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-caddy-'));
  const conf = readFileSync(join(EXAMPLES, 'Caddyfile'), 'utf8')
    .replace('http://127.0.0.1:8001', `http://127.0.0.1:${ports.listen}`)
    .replace('forward_auth 127.0.0.1:8082', `forward_auth 127.0.0.1:${ports.sluice}`)
    .replace('reverse_proxy 127.0.0.1:8090', `reverse_proxy 127.0.0.1:${ports.upstream}`);
  writeFileSync(join(dir, 'Caddyfile'), conf);
  let output = '';
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };
  const child = spawn('/usr/bin/caddy', ['run', '--config', join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const url = `http://127.0.0.1:${ports.listen}`;
  await waitForHttp(`${url}/_probe`, child, () => output);
  return owned(child, dir, url);
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
