// The history on the operator's page, in Chromium, over two real gateways on
// one real redis-server: counts of both instances add up exactly and survive a
// page reload; a slow upstream shows in the request p99, a dead one's 502s in
// their class; a rule change, a breaker opening (redis-server paused with
// SIGSTOP) and a stop appear as events; a stopped instance shows as gone, not
// removed; every history key in Redis expires. Screenshots go to test-output/.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { HISTORY_PREFIX } from '../../src/dashboard/history-redis.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { hasChromium, launchBrowser, openView, OUTPUT_DIR, type TestBrowser } from '../helpers/browser.js';
import { until } from '../helpers/poll.js';

const TOKEN = 'history-admin-token-0123456789ab';
const yaml = `
routes:
  - { id: orders, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
  - { id: slow, path: /slow, upstream: "\${UPSTREAM}" }
  - { id: broken, path: /broken, upstream: "\${DEAD}" }
tenants:
  unknownKeys: reject
  keys:
    - { key: calm-key-0000001, tenant: calm }
    - { key: noisy-key-000001, tenant: noisy }
defaultRule: { policy: token_bucket, capacity: 1000, refillPerSecond: 100 }
rules:
  - { tenant: noisy, route: orders, policy: token_bucket, capacity: 4, refillPerSecond: 0.01 }
`;

describe('the history on the operator page', { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let a: RunningSluice;
  let b: RunningSluice;
  let browser: TestBrowser;
  const dirs: string[] = [];
  const seen = { s200: 0, s429: 0, s503: 0 };
  let env: Record<string, string>;

  const total = (route: string, count: string) => browser.page.locator(`[data-history-route="${route}"] tr[data-count="${count}"] td`).nth(1).textContent();
  const latency = (route: string, name: string) => browser.page.locator(`[data-history-route="${route}"] tr[data-latency="${name}"] td`).nth(1).textContent();
  const signIn = async () => {
    await browser.page.getByLabel('Admin token').fill(TOKEN);
    await browser.page.keyboard.press('Enter');
    await browser.page.locator('#signed-in').waitFor({ state: 'visible' });
  };
  const countsShown = async () => [Number(await total('orders', 'allowed')), Number(await total('orders', 'refused')), Number(await total('orders', 's2xx')), Number(await total('orders', 's429'))];

  before(async () => {
    [redis, upstream] = await Promise.all([
      startRedis(),
      startUpstream((req, res) => {
        req.resume();
        const delay = req.url === '/slow' ? 400 : 0;
        setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'), delay);
      }),
    ]);
    const dead = `http://127.0.0.1:${await freePort()}`; // nothing listens there: the gateway's requests get a 502
    env = { UPSTREAM: upstream.url, DEAD: dead, SLUICE_REDIS_URL: redis.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN };
    const start = () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-history-'));
      dirs.push(dir);
      return startGateway(yaml, { ...env, SLUICE_DATA_DIR: dir }, { ruleStore: true, admin: true });
    };
    a = await start();
    b = await start();
    browser = await launchBrowser();
    await browser.page.goto(`${a.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    redis?.resume();
    await Promise.allSettled([a?.close(), b?.close()]);
    await Promise.allSettled([redis?.stop(), upstream?.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("counts sent to both instances add up exactly on the page, and survive a reload", async () => {
    await signIn();
    await openView(browser.page, 'routes');
    for (let i = 0; i < 16; i++) {
      const key = i % 4 === 0 ? 'calm-key-0000001' : 'noisy-key-000001';
      const { status } = await call(`${(i % 2 === 0 ? a : b).url}/orders`, { method: 'POST', headers: { 'x-api-key': key } });
      if (status === 200) seen.s200++;
      else if (status === 429) seen.s429++;
      else if (status === 503) seen.s503++;
      else assert.fail(`unexpected status ${status}`);
    }
    assert.ok(seen.s200 > 0 && seen.s429 > 0, `both verdicts: ${JSON.stringify(seen)}`);
    const expected = [seen.s200, seen.s429 + seen.s503, seen.s200, seen.s429];
    await browser.page.locator('[data-history-route="orders"]').waitFor({ timeout: 10_000 });
    await until(async () => JSON.stringify(await countsShown()) === JSON.stringify(expected), `totals ${expected} on the page`, 15_000, 50);
    assert.match((await browser.page.locator('#history-scope').textContent()) ?? '', /Summed over every instance/);
    await browser.shot('history-01-two-instances');
    await browser.page.reload();
    await signIn();
    assert.equal(await browser.page.locator('#nav a[aria-current="page"]').getAttribute('data-nav-link'), 'routes', 'the reload kept the view');
    await browser.page.locator('[data-history-route="orders"]').waitFor({ timeout: 10_000 });
    assert.deepEqual(await countsShown(), expected, 'the same totals after a reload: they live in Redis, not in the page');
    await browser.page.getByLabel('5 min').check();
    await until(async () => JSON.stringify(await countsShown()) === JSON.stringify(expected), 'the same totals over 5 min', 10_000, 50);
    await browser.page.getByLabel('1 day').check();
    await until(async () => JSON.stringify(await countsShown()) === JSON.stringify(expected), 'the same totals over a day (minute buckets)', 10_000, 50);
    await browser.page.getByLabel('1 hour').check();
  });

  it('a slow upstream shows in the request p99; a dead one gives 502s, counted in their class', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await call(`${a.url}/slow`, { headers: { 'x-api-key': 'calm-key-0000001' } })).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await call(`${b.url}/broken`, { headers: { 'x-api-key': 'calm-key-0000001' } })).status, 502);
    await until(async () => (await browser.page.locator('[data-history-route="broken"]').count()) > 0 && (await browser.page.locator('[data-history-route="slow"]').count()) > 0 && (await total('broken', 's502_504')) === '2', 'the slow route and the 502s on the page', 15_000, 50);
    const p99 = Number(/≤ ([\d.]+) ms/.exec((await latency('slow', 'requestP99')) ?? '')?.[1]);
    assert.ok(p99 >= 250, `request p99 of a 400 ms upstream: ≤ ${p99} ms`);
    assert.equal(await total('broken', 's2xx'), '0');
    assert.equal(await browser.page.locator('[data-history-route="broken"] tr[data-count="s502_504"]').getAttribute('class'), 'trouble-bad');
    await browser.shot('history-02-slow-and-502');
    await browser.page.locator('[data-history-route="broken"]').screenshot({ path: join(OUTPUT_DIR, 'history-02b-route-broken.png') });
    await openView(browser.page, 'instances');
    assert.equal(await browser.page.locator(`#upstreams tbody tr[data-upstream="broken ${b.url.replace(/:\d+$/, '')}"]`).count(), 0); // sanity of the selector below
    await until(async () => (await browser.page.locator('#upstreams tbody tr.trouble-warn', { hasText: 'broken' }).count()) > 0, "the dead upstream's errors on the instance list", 5_000, 50);
    await browser.page.locator('section[aria-labelledby="instances-title"]').screenshot({ path: join(OUTPUT_DIR, 'history-02c-instances.png') });
  });

  it('a rule change and a config reload appear as events', async () => {
    const put = await call(`${a.adminUrl}/rules/calm/orders`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ policy: 'token_bucket', capacity: 50, refillPerSecond: 5 }) });
    assert.equal(put.status, 200);
    await openView(browser.page, 'routes');
    await browser.page.locator('#events tbody tr[data-event="rule-change"]', { hasText: 'rule calm/orders' }).waitFor({ timeout: 10_000 });
    await openView(browser.page, 'instances');
    await browser.page.locator('#instances tbody tr', { hasText: /changes?, last/ }).first().waitFor({ timeout: 5_000 });
    await openView(browser.page, 'routes');
    a.reconfigure(parseConfig(yaml, { source: 'reloaded.yaml', env: { ...env, SLUICE_LISTEN: '127.0.0.1:0' } }));
    await browser.page.locator('#events tbody tr[data-event="config-reload"]', { hasText: '3 routes' }).waitFor({ timeout: 10_000 });
  });

  it('Redis paused: the banner says which instance is degraded; back, the breaker opening is an event on the charts', async () => {
    redis.pause();
    try {
      await until(async () => {
        await call(`${a.url}/orders`, { method: 'POST', headers: { 'x-api-key': 'calm-key-0000001' } });
        return (await browser.page.locator('#degraded-banner').isVisible()) && /Degraded: .* fallback/.test((await browser.page.locator('#degraded-banner').textContent()) ?? '');
      }, 'the breaker of A open', 20_000, 50);
      await browser.page.evaluate(() => window.scrollTo(0, 0));
      await browser.page.screenshot({ path: join(OUTPUT_DIR, 'history-03-degraded-banner.png') });
    } finally {
      redis.resume();
    }
    await browser.page.locator('#events tbody tr[data-event="breaker-open"]').first().waitFor({ timeout: 15_000 });
    await browser.page.locator('#events tbody tr[data-event="breaker-close"]').first().waitFor({ timeout: 15_000 });
    await browser.page.locator('#degraded-banner').waitFor({ state: 'hidden', timeout: 15_000 });
  });

  it('a stopped instance shows as gone with its stop time, not removed; its stop is an event', async () => {
    await openView(browser.page, 'instances');
    const bId = await browser.page.locator('#instances tbody tr:not([data-state^="gone"])').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.instance).find((id, _, all) => all.length === 2 && !document.querySelector(`tr[data-instance="${id}"]`)?.textContent?.includes('serving this page')));
    assert.ok(bId, 'B listed');
    await b.close();
    await browser.page.locator(`#instances tbody tr[data-instance="${bId}"][data-state="gone-stopped"]`, { hasText: 'gone: stopped at' }).waitFor({ timeout: 10_000 });
    assert.match((await browser.page.locator('#scope').textContent()) ?? '', /1 instance publishing/);
    await browser.page.locator('#degraded-banner').waitFor({ state: 'hidden', timeout: 5_000 }); // a clean stop is not trouble
    assert.equal(await browser.page.locator(`#instances tbody tr[data-instance="${bId}"]`).getAttribute('class'), 'gone-row', 'greyed, not shaded as trouble');
    await browser.page.locator('section[aria-labelledby="instances-title"]').screenshot({ path: join(OUTPUT_DIR, 'history-04-instance-gone.png') });
    await openView(browser.page, 'routes');
    await browser.page.locator('#events tbody tr[data-event="instance-stop"]', { hasText: bId! }).waitFor({ timeout: 10_000 });
    await browser.page.locator('section[aria-labelledby="history-title"]').screenshot({ path: join(OUTPUT_DIR, 'history-05-events.png') });
  });

  it('every history key in Redis expires; the page had no script error', async () => {
    const client = redis.client();
    const keys = await client.keys(`${HISTORY_PREFIX}*`);
    assert.ok(keys.length >= 3);
    for (const key of keys) assert.ok((await client.pttl(key)) > 0, `${key} expires`);
    client.disconnect();
    const problems = browser.console.filter((line) => /Content Security Policy|pageerror/i.test(line));
    assert.deepEqual(problems, []);
  });
});
