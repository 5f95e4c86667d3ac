// The quick start, exactly: examples/quickstart.yaml, a demo upstream, and
// three POST /orders as shop-a → 200 200 429. Once in-process with
// startSluice, once through the `sluice start` command (SIGTERM to stop).
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { startDemoUpstream } from '../../src/demo/upstream.js';
import { freePort } from '../helpers/ports.js';
import { call, silent } from '../helpers/gateway-support.js';
import { sluiceCli } from '../helpers/cli.js';

const QUICKSTART = 'examples/quickstart.yaml';

async function threePosts(url: string): Promise<number[]> {
  const codes = [];
  for (let i = 0; i < 3; i++) codes.push((await call(`${url}/orders`, { method: 'POST', headers: { 'X-Api-Key': 'shop-a-demo-key' } })).status);
  return codes;
}

describe('quick start', () => {
  let child: ChildProcess | undefined;
  after(() => {
    child?.kill('SIGKILL');
  });

  it('startSluice with the demo upstream: 200 200 429', async () => {
    const port = await freePort();
    const config = loadConfig(QUICKSTART, { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}` });
    const app = await startSluice(config, { demoUpstream: { port }, logger: silent });
    try {
      assert.deepEqual(await threePosts(app.url), [200, 200, 429]);
      const other = await call(`${app.url}/orders`, { method: 'POST', headers: { 'X-Api-Key': 'shop-b' } });
      assert.equal(other.status, 200, 'an unknown key is its own tenant, under the default rule');
      assert.equal(other.headers['x-ratelimit-limit'], '20');
    } finally {
      await app.close();
    }
  });

  it('`sluice start --config examples/quickstart.yaml`: 200 200 429, then a clean exit on SIGTERM', async () => {
    const demo = await startDemoUpstream({ port: 0 });
    const port = await freePort();
    try {
      child = spawn(process.execPath, [...sluiceCli(), 'start', '--demo-upstream', '--config', QUICKSTART], {
        env: { ...process.env, SLUICE_LISTEN: `127.0.0.1:${port}`, UPSTREAM_URL: demo.url, SLUICE_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      await new Promise<void>((resolve, reject) => {
        const check = () => (output.includes('sluice gateway listening') ? resolve() : undefined);
        child!.stdout?.on('data', check);
        child!.once('exit', (code) => reject(new Error(`sluice exited with ${code}: ${output}`)));
      });
      assert.ok(!output.includes('demo upstream listening'), 'UPSTREAM_URL set: no demo upstream of its own');
      assert.deepEqual(await threePosts(`http://127.0.0.1:${port}`), [200, 200, 429]);
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      assert.match(output, /sluice gateway stopped/);
    } finally {
      await demo.close();
    }
  });
});
