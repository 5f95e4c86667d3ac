// Helpers for `sluice ratelimit` tests: the real command in a child process
// with only the reference's variables (and free loopback ports), its JSON log
// lines collected; a runtime folder laid out as Kubernetes mounts a ConfigMap
// (`..<stamp>/` holding the files, `..data` → it, each file → `..data/file`)
// with the atomic `..data` swap kubelet makes.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../helpers/ports.js';
import { call } from '../helpers/gateway-support.js';
import { sluiceCli } from '../helpers/cli.js';

export interface RatelimitProcess {
  readonly grpc: string;
  readonly http: string;
  readonly debug: string;
  /** PROMETHEUS_ADDR's /metrics (served when USE_PROMETHEUS=true). */
  readonly metrics: string;
  /** Every log line so far, parsed. */
  readonly logs: Record<string, unknown>[];
  readonly stderr: () => string;
  /** Resolves with the first log line whose `@message` matches (after `from` lines). */
  waitForLog(pattern: RegExp, from?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export async function startRatelimitProcess(env: Record<string, string>): Promise<RatelimitProcess> {
  const [grpcPort, httpPort, debugPort, metricsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const base = { PATH: process.env.PATH ?? '', GRPC_HOST: '127.0.0.1', GRPC_PORT: String(grpcPort), HOST: '127.0.0.1', PORT: String(httpPort), DEBUG_HOST: '127.0.0.1', DEBUG_PORT: String(debugPort), PROMETHEUS_ADDR: `127.0.0.1:${metricsPort}`, LOG_LEVEL: 'info', LOG_FORMAT: 'json' };
  const child = spawn(process.execPath, [...sluiceCli(), 'ratelimit'], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const running: RatelimitProcess = {
    grpc: `127.0.0.1:${grpcPort}`,
    http: `http://127.0.0.1:${httpPort}`,
    debug: `http://127.0.0.1:${debugPort}`,
    metrics: `http://127.0.0.1:${metricsPort}/metrics`,
    logs,
    stderr: () => stderr,
    async waitForLog(pattern, from = 0) {
      for (let i = 0; i < 400; i++) {
        const found = logs.slice(from).find((line) => pattern.test(String(line['@message'])));
        if (found) return found;
        if (child.exitCode !== null) throw new Error(`sluice ratelimit exited with ${child.exitCode}: ${stderr}`);
        await sleep(50);
      }
      throw new Error(`no log line ${pattern}: ${JSON.stringify(logs)} ${stderr}`);
    },
    stop: () => stopChild(child),
  };
  try {
    await running.waitForLog(/^sluice ratelimit serving$/);
  } catch (error) {
    await running.stop();
    throw error;
  }
  return running;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Polls `/rlconfig` until it shows `pattern` (a reload is seen, not timed). */
export async function waitForRlconfig(debugUrl: string, pattern: RegExp): Promise<string> {
  let body = '';
  for (let i = 0; i < 400; i++) {
    body = (await call(`${debugUrl}/rlconfig`)).body;
    if (pattern.test(body)) return body;
    await sleep(50);
  }
  throw new Error(`/rlconfig never showed ${pattern}: ${body}`);
}

/** A folder mounted like a ConfigMap: swap() replaces every file at once, as kubelet does. */
export class ConfigMapFolder {
  private version = 0;
  private names: string[] = [];

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  swap(files: Record<string, string>): void {
    const stamp = `..2026_12_01_${++this.version}`;
    mkdirSync(join(this.dir, stamp));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(this.dir, stamp, name), text);
    symlinkSync(stamp, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
    for (const name of Object.keys(files)) {
      try {
        symlinkSync(join('..data', name), join(this.dir, name));
      } catch {
        // already linked through ..data
      }
    }
    // kubelet then removes the links of keys the ConfigMap no longer has
    for (const name of this.names) if (!(name in files)) rmSync(join(this.dir, name), { force: true });
    this.names = Object.keys(files);
    if (this.version > 1) rmSync(join(this.dir, `..2026_12_01_${this.version - 1}`), { recursive: true, force: true });
  }
}

export const tempDir = (prefix: string): string => mkdtempSync(join(tmpdir(), prefix));
