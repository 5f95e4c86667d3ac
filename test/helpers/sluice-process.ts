// A real `sluice start` child for the worker and reload tests: spawned through
// tsx on the source entry, its output kept, its admin API and signals at hand.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { Agent, request } from 'undici';
import type { KeepAliveLoad } from './drain-load.js';
import { sluiceCli } from './cli.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class SluiceProcess {
  output = '';
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(configFile: string, readonly adminUrl: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [...sluiceCli(), 'start', '--config', configFile, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    const keep = (chunk: Buffer) => {
      this.output += chunk.toString();
    };
    this.child.stdout?.on('data', keep);
    this.child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** Resolves once `line` was logged; rejects if the process exits first. */
  async logged(line: string, timeoutMs = 60_000): Promise<void> {
    for (let waited = 0; !this.output.includes(line); waited += 50) {
      if (this.child.exitCode !== null) throw new Error(`sluice exited with ${this.child.exitCode}: ${this.output}`);
      if (waited > timeoutMs) throw new Error(`no "${line}" logged: ${this.output}`);
      await sleep(50);
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: admin answers are read field by field in assertions
  async admin(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }> {
    const res = await fetch(`${this.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text };
  }

  /** The pids of the workers serving now (from /readyz). */
  async workerPids(): Promise<number[]> {
    return (await this.admin('GET', '/readyz')).body.workers.serving as number[];
  }

  /** Polls until `check` holds (no timing asserted: a busy machine only makes it slower). */
  async until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
    for (let waited = 0; !(await check()); waited += 100) {
      if (waited > timeoutMs) throw new Error(`never: ${what}\n${this.output}`);
      await sleep(100);
    }
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

/** One request on a fresh connection: node:cluster hands each new connection to the next worker. */
export async function freshRequest(url: string, headers: Record<string, string> = {}): Promise<{ status: number; limit: string | undefined }> {
  const agent = new Agent({ connections: 1 });
  try {
    const res = await request(url, { headers: { 'x-api-key': 'someone-anonymous', ...headers }, dispatcher: agent });
    await res.body.text();
    return { status: res.statusCode, limit: res.headers['x-ratelimit-limit'] as string | undefined };
  } finally {
    await agent.close();
  }
}

/** After the listener is gone: no client saw an error but the final refusals, and every answer was a 200. */
export function assertNoClientErrors(load: KeepAliveLoad, atLeast: number): void {
  const errors = load.outcomes.filter((outcome) => outcome.error !== undefined && outcome.error !== 'ECONNREFUSED');
  assert.deepEqual(errors, [], 'no resets or other socket errors');
  const answered = load.outcomes.filter((outcome) => outcome.status !== undefined);
  assert.ok(answered.length >= atLeast, `${answered.length} answered`);
  assert.deepEqual(new Set(answered.map((outcome) => outcome.status)), new Set([200]));
}

export interface WorkersSetup {
  dir: string;
  file: string;
  gateway: string;
  adminUrl: string;
}

/** A temp dir and a config on free ports with Redis for buckets (a port, or the `store:` section's flow map); `rest` adds routes and the rest. */
export async function writeWorkersConfig(prefix: string, redis: number | string, rest: string): Promise<WorkersSetup> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const [port, adminPort] = [await freePort(), await freePort()];
  const file = join(dir, 'sluice.yaml');
  writeFileSync(
    file,
    `listen: 127.0.0.1:${port}
admin: { listen: '127.0.0.1:${adminPort}', token: ${ADMIN_TOKEN} }
dataDir: ${join(dir, 'data')}
store: ${typeof redis === 'number' ? `{ url: 'redis://127.0.0.1:${redis}', deadlineMs: 2000 }` : redis}
${rest}`,
  );
  return { dir, file, gateway: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${adminPort}` };
}
