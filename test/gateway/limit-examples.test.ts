// The limit examples exactly as shipped, through the real gateway over HTTP
// with the demo upstream: the README's curl loops, as tests.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RunningSluice, startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { freePort } from '../helpers/ports.js';
import { call, silent } from './support.js';

async function serve(file: string, run: (url: string) => Promise<void>): Promise<void> {
  const port = await freePort();
  const config = loadConfig(file, { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}` });
  const app: RunningSluice = await startSluice(config, { demoUpstream: { port }, logger: silent });
  try {
    await run(app.url);
  } finally {
    await app.close();
  }
}

async function loop(times: number, url: string, options: Parameters<typeof call>[1] = {}) {
  const replies = [];
  for (let i = 0; i < times; i++) replies.push(await call(url, options));
  return replies;
}

describe('examples/login-protection.yaml', () => {
  it('POST /api/login: 1 + burst 5 at once per IP, then 429 with Retry-After; the rest of the API has its own zone', async () => {
    await serve('examples/login-protection.yaml', async (url) => {
      const login = await loop(8, `${url}/api/login`, { method: 'POST' });
      assert.deepEqual(login.map((r) => r.status), [200, 200, 200, 200, 200, 200, 429, 429]);
      assert.equal(login[6]?.headers['retry-after'], '1');
      assert.equal(login[0]?.headers['ratelimit-policy'], '"login-per-ip";q=6;w=6');
      // burst 20 nodelay: 21 at once (a few more if the burst takes more than 100 ms to send)
      const api = await Promise.all(Array.from({ length: 40 }, () => call(`${url}/api/orders`)));
      const ok = api.filter((r) => r.status === 200);
      const refused = api.filter((r) => r.status === 429);
      assert.equal(ok.length + refused.length, 40);
      assert.ok(ok.length >= 21 && refused.length > 0, `${ok.length} admitted, ${refused.length} refused`);
      assert.equal(refused[0]?.headers['retry-after'], '1');
      assert.equal(ok[0]?.headers['ratelimit-policy'], '"api-per-ip";q=21;w=3');
    });
  });
});

describe('examples/anonymous-vs-authenticated.yaml', () => {
  it('anonymous: 100 a minute per IP, then 429; authenticated: 5,000 an hour per tenant, 401 without a key', async () => {
    await serve('examples/anonymous-vs-authenticated.yaml', async (url) => {
      const anonymous = await loop(101, `${url}/public/news`);
      assert.deepEqual(anonymous.slice(0, 100).map((r) => r.status), new Array(100).fill(200));
      assert.equal(anonymous[100]?.status, 429);
      assert.ok(Number(anonymous[100]?.headers['retry-after']) >= 1);
      assert.equal(anonymous[0]?.headers['ratelimit-policy'], '"api-anonymous";q=100;w=60');

      assert.equal((await call(`${url}/api/me`)).status, 401);
      const user = await call(`${url}/api/me`, { headers: { 'X-Api-Key': 'demo-user-key' } });
      assert.equal(user.status, 200);
      assert.equal(user.headers['x-ratelimit-limit'], '5000');
      assert.equal(user.headers['x-ratelimit-remaining'], '4999');
      assert.equal(user.headers['ratelimit-policy'], '"api-authenticated";q=5000;w=3600');
    });
  });
});
