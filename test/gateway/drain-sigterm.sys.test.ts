// `sluice start` receiving a real SIGTERM under keep-alive load: no client sees
// a reset, every answered request is a 200, and the process exits 0.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/ports.js';
import { KeepAliveLoad } from '../helpers/drain-load.js';
import { startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { sluiceCli } from '../helpers/cli.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sluice start: SIGTERM drain', () => {
  let upstream: TestUpstream;
  let dir: string;
  let child: ChildProcess | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-sigterm-'));
    upstream = await startUpstream((req, res) => {
      req.resume();
      req.on('end', () => setTimeout(() => res.end('{}'), 1_500));
    });
  });
  after(async () => {
    child?.kill('SIGKILL');
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drains without resets and exits 0', async () => {
    const port = await freePort();
    const config = join(dir, 'sluice.yaml');
    writeFileSync(
      config,
      `listen: 127.0.0.1:${port}
admin: { listen: '127.0.0.1:0' }
dataDir: ${join(dir, 'data')}
routes: [{ id: r, path: /r, upstream: '${upstream.url}' }]
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
`,
    );
    child = spawn(process.execPath, [...sluiceCli(), 'start', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const listening = new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('sluice gateway listening')) resolve();
      };
      child!.stdout?.on('data', onData);
      child!.stderr?.on('data', onData);
      child!.once('exit', (code) => reject(new Error(`sluice exited with ${code}: ${output}`)));
    });
    await listening;
    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));

    const load = new KeepAliveLoad(`http://127.0.0.1:${port}/r`, { 'x-api-key': 'shop-a' });
    load.start(40);
    // A busy machine starts the child slowly: wait for a round of answers, then keep the load going a little.
    for (let waited = 0; load.outcomes.filter((outcome) => outcome.status !== undefined).length < 40 && waited < 30_000; waited += 100) await sleep(100);
    await sleep(500);
    child.kill('SIGTERM');
    await load.finished();
    assert.equal(await exited, 0, output);

    const errors = load.outcomes.filter((outcome) => outcome.error !== undefined && outcome.error !== 'ECONNREFUSED');
    assert.deepEqual(errors, [], 'no resets or other socket errors');
    const answered = load.outcomes.filter((outcome) => outcome.status !== undefined);
    assert.ok(answered.length >= 40);
    assert.deepEqual(new Set(answered.map((outcome) => outcome.status)), new Set([200]));
    assert.ok(answered.some((outcome) => outcome.connection === 'close'), 'drain responses carry Connection: close');
  });
});
