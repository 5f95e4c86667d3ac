// A real redis-server process on a free loopback port, owned by one test file.
// Tests kill, pause (SIGSTOP) and restart it to prove the fault handling.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** The process id of the running server (changes on restart). */
  readonly pid: number;
  /** A fresh client to this server (the caller closes it). */
  client(): Redis;
  kill(): Promise<void>;
  pause(): void;
  resume(): void;
  /** Starts the server again on the same port, empty. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  let child: ChildProcess | undefined;

  const launch = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extraArgs],
      { stdio: 'ignore' },
    );
    await waitForPing(port);
  };
  const exited = () =>
    new Promise<void>((resolve) => {
      if (!child || child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });

  await launch();
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid ?? 0;
    },
    client: () => new Redis({ port, host: '127.0.0.1', lazyConnect: false, maxRetriesPerRequest: 1 }),
    async kill() {
      child?.kill('SIGKILL');
      await exited();
    },
    pause() {
      child?.kill('SIGSTOP');
    },
    resume() {
      child?.kill('SIGCONT');
    },
    async restart() {
      await server.kill();
      await launch();
    },
    async stop() {
      child?.kill('SIGCONT');
      child?.kill('SIGKILL');
      await exited();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return server;
}

export async function waitForPing(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      // not up yet
    } finally {
      probe.disconnect();
    }
    await sleep(50);
  }
  throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
}
