// Servers under test run in their own processes, so the load generator never
// shares an event loop with them and each one's CPU can be read on its own.
// A Node child is forked with tsx (Sluice's own servers then load the built
// package: built.ts) and says `{ url }` over IPC once listening;
// a native one (nginx, HAProxy) is spawned and polled until its port answers.
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureBuilt } from './built.js';
import { onCleanup } from './cleanup.js';

export interface Child {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  /** User + system CPU time of the process so far, in microseconds (from /proc). */
  cpuMicros(): number;
  stop(): Promise<void>;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

export function cpuMicrosOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: field 14 (utime) and 15 (stime) are at indexes 11 and 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / CLOCK_TICKS;
}

function wrap(name: string, url: string, child: ChildProcess): Child {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const stop = onCleanup(async () => {
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(late);
  });
  return { name, url, pid: child.pid!, cpuMicros: () => cpuMicrosOf(child.pid!), stop };
}

/** Forks `bench/lib/servers/<file>` with tsx; `args` reach it as JSON in argv[2]; `nodeArgs` e.g. `--cpu-prof`. */
export function forkServer(name: string, file: string, args: object, nodeArgs: string[] = []): Promise<Child> {
  ensureBuilt(); // Sluice's servers run the built package
  const child = fork(new URL(`./servers/${file}`, import.meta.url), [JSON.stringify(args)], {
    execArgv: ['--import', 'tsx', ...nodeArgs],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} did not start within 30 s`));
    }, 30_000);
    child.once('message', (message: { url?: string; error?: string }) => {
      clearTimeout(timer);
      if (message.url) resolve(wrap(name, message.url, child));
      else reject(new Error(`${name}: ${message.error ?? 'failed to start'}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with code ${code} before listening`));
    });
  });
}

/**
 * A fresh server for one measured load (a profile, a perf recording): forked
 * with `nodeArgs(dir)`, `dir` a new temp dir for what it writes, warmed up by
 * one `load` (JIT, pools), then `measure(child, dir)`. The server is stopped
 * and the dir removed however `measure` ends.
 */
export async function measuredRun<T>(
  label: string,
  file: string,
  args: object,
  nodeArgs: (dir: string) => string[],
  load: (child: Child) => Promise<unknown>,
  measure: (child: Child, dir: string) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-run-'));
  try {
    const child = await forkServer(label, file, args, nodeArgs(dir));
    try {
      await load(child);
      return await measure(child, dir);
    } finally {
      await child.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Spawns a native server that listens on `port`, waiting until the port accepts connections. */
export async function spawnServer(name: string, command: string, args: string[], port: number): Promise<Child> {
  const child = spawn(command, args, { stdio: 'ignore' });
  const handle = wrap(name, `http://127.0.0.1:${port}`, child);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await accepts(port)) return handle;
    await sleep(50);
  }
  await handle.stop();
  throw new Error(`${name} did not listen on ${port}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
