// The limit examples exactly as shipped, through the real gateway over HTTP
// with the demo upstream: the README's curl loops, as tests.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RunningSluice, startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { freePort } from '../helpers/ports.js';
import { call, silent } from '../helpers/gateway-support.js';

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

/** `"id";r=N;t=T, …` → remaining per limit id. */
function remainingOf(header: string | string[] | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of String(header).split(', ')) {
    const match = /^"([^"]+)";r=(\d+);t=\d+$/.exec(item);
    assert.ok(match, `RateLimit item ${item}`);
    out[match[1]!] = Number(match[2]);
  }
  return out;
}

describe('examples/login-protection.yaml', () => {
  it('POST /api/login: both zones at once; 1 + burst 5 per IP, then 429 governed by login; refused logins drain nothing from the api zone', async () => {
    await serve('examples/login-protection.yaml', async (url) => {
      const login = await loop(8, `${url}/api/login`, { method: 'POST' });
      assert.deepEqual(login.map((r) => r.status), [200, 200, 200, 200, 200, 200, 429, 429]);
      assert.equal(login[6]?.headers['retry-after'], '1');
      // The refusing limit governs X-RateLimit-*; the IETF fields list both zones.
      assert.equal(login[6]?.headers['x-ratelimit-limit'], '6');
      assert.equal(login[0]?.headers['ratelimit-policy'], '"login-per-ip";q=6;w=6, "api-per-ip";q=21;w=3');
      // Six logins admitted: the api zone has at most 21 - 6 left, and the refused two took nothing
      // (the zone refills 10 a second, so it may have more, never less).
      const apiLeft = remainingOf(login[7]?.headers.ratelimit)['api-per-ip']!;
      assert.ok(apiLeft >= 15, `api-per-ip has ${apiLeft} left after 6 admitted logins`);
      const api = await Promise.all(Array.from({ length: 40 }, () => call(`${url}/api/orders`)));
      const ok = api.filter((r) => r.status === 200);
      const refused = api.filter((r) => r.status === 429);
      assert.equal(ok.length + refused.length, 40);
      assert.ok(ok.length >= 15 && refused.length > 0, `${ok.length} admitted, ${refused.length} refused`);
      assert.equal(refused[0]?.headers['retry-after'], '1');
      assert.equal(refused[0]?.headers['x-ratelimit-limit'], '21');
      assert.equal(ok[0]?.headers['ratelimit-policy'], '"api-ceiling";q=1000;w=2, "api-per-ip";q=21;w=3');
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

  it('/api/reports: a burst and a daily quota at once; the burst refuses, the quota is charged only for admitted requests', async () => {
    await serve('examples/anonymous-vs-authenticated.yaml', async (url) => {
      const key = { headers: { 'X-Api-Key': 'demo-user-key' } };
      const replies = await loop(7, `${url}/api/reports`, key);
      const admitted = replies.filter((r) => r.status === 200).length;
      // 5 at once; a slow machine may see a refill (1 a second), never fewer
      assert.ok(admitted >= 5 && admitted < 7, `${admitted} admitted`);
      const last = replies[6]!;
      assert.equal(last.status, 429);
      assert.equal(last.headers['x-ratelimit-limit'], '5');
      assert.equal(last.headers['ratelimit-policy'], '"reports-burst";q=5;w=5, "reports-daily";q=100;w=86400');
      assert.equal(remainingOf(last.headers.ratelimit)['reports-daily'], 100 - admitted);
    });
  });
});
