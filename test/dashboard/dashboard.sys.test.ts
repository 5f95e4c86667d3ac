// The operator's page as a person uses it, in Debian's Chromium: two gateways
// on one Redis (the page is served by A and shows both), traffic the test sends,
// a rule edited and a key revoked from the page, then Redis stopped and A
// stopped. Screenshots of each state go to test-output/dashboard/.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';
import { until } from '../helpers/poll.js';

const TOKEN = 'dashboard-admin-token-0123456789';
const KEYS = { calm: 'calm-key-000001', noisy: 'noisy-key-000001', meek: 'meek-key-000001', shadowy: 'shadowy-key-00001', editable: 'editable-key-0001' };
const yaml = `
routes:
  - { id: create-order, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
tenants:
  unknownKeys: reject
  keys:
${Object.entries(KEYS)
  .map(([tenant, key]) => `    - { key: ${key}, tenant: ${tenant} }`)
  .join('\n')}
defaultRule: { policy: token_bucket, capacity: 1000, refillPerSecond: 100 }
rules:
  - { tenant: noisy, route: create-order, policy: token_bucket, capacity: 3, refillPerSecond: 0.01 }
  - { tenant: meek, route: create-order, policy: token_bucket, capacity: 3, refillPerSecond: 0.01 }
  - { tenant: shadowy, route: create-order, policy: token_bucket, capacity: 1, refillPerSecond: 0.01, shadow: true }
  - { tenant: editable, route: create-order, policy: token_bucket, capacity: 50, refillPerSecond: 1 }
`;

const order = (app: RunningSluice, key: string) => call(`${app.url}/orders`, { method: 'POST', headers: { 'x-api-key': key } });

describe('the operator dashboard in a real browser', { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let a: RunningSluice;
  let b: RunningSluice;
  let browser: TestBrowser;
  const dirs: string[] = [];

  before(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startUpstream()]);
    const start = () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-dashboard-'));
      dirs.push(dir);
      const env = { UPSTREAM: upstream.url, SLUICE_REDIS_URL: redis.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
      return startGateway(yaml, env, { ruleStore: true, admin: true });
    };
    a = await start();
    b = await start();
    browser = await launchBrowser();
    await browser.page.goto(`${a.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    await Promise.allSettled([a?.close(), b?.close()]);
    await Promise.allSettled([redis?.stop(), upstream?.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a bad token is refused with a clear message, and no data is shown', async () => {
    const { page } = browser;
    await page.getByLabel('Admin token').fill('not-the-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#sign-in-error', { hasText: 'Sign-in refused' }).waitFor({ timeout: 3000 });
    assert.match((await page.locator('#sign-in-error').textContent()) ?? '', /wrong token/);
    assert.equal(await page.locator('#signed-in').isVisible(), false);
    await browser.shot('01-bad-token');
  });

  it('signed in: traffic sent to both instances appears on the chart within 3 s, both instances on redis', async () => {
    const { page } = browser;
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.keyboard.press('Enter'); // the form works from the keyboard
    await page.locator('#signed-in').waitFor({ state: 'visible' });
    // A busy machine may miss the Redis deadline (a 429 until Redis answers): count what was allowed.
    let admitted = 0;
    for (let i = 0; i < 12; i++) if ((await order(i % 2 === 0 ? a : b, KEYS.calm)).status === 200) admitted++;
    assert.ok(admitted > 0);
    await openView(page, 'routes');
    const sent = performance.now();
    const allowed = page.locator('[data-route="create-order"] .route-table tbody tr', { hasText: 'allowed' }).locator('td').nth(1);
    await page.waitForFunction((n) => {
      const cell = document.querySelector('[data-route="create-order"] .route-table tbody tr td:nth-child(2)');
      return Number(cell?.textContent) >= n;
    }, admitted, { timeout: 3000 });
    assert.ok(performance.now() - sent < 3000);
    assert.ok(Number(await allowed.textContent()) >= admitted);
    assert.equal(await page.locator('[data-route="create-order"] canvas').count() > 0, true, 'uPlot drew the chart');
    await openView(page, 'instances');
    await page.locator('#instances tbody tr').nth(1).waitFor({ timeout: 3000 });
    assert.deepEqual(await page.locator('#instances tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.mode)), ['redis', 'redis']);
    assert.match((await page.locator('#scope').textContent()) ?? '', /Cluster-wide view: 2 instances/);
    await browser.shot('02-traffic-cluster');
  });

  it('a tenant driven into 429s tops the list of the most limited', async () => {
    const statuses = [];
    for (let i = 0; i < 20; i++) statuses.push((await order(i % 2 === 0 ? a : b, KEYS.noisy)).status);
    for (let i = 0; i < 5; i++) statuses.push((await order(b, KEYS.meek)).status);
    assert.ok(statuses.filter((s) => s === 429).length >= 15);
    const { page } = browser;
    await openView(page, 'tenants');
    await page.locator('#top tbody tr').nth(1).waitFor({ timeout: 3000 });
    await until(async () => {
      const tenants = await page.locator('#top tbody tr td:nth-child(2)').allTextContents();
      return tenants[0] === 'noisy' && tenants[1] === 'meek';
    }, 'noisy first, meek second', 3000, 50);
    await browser.shot('03-top-limited');
  });

  it('a shadow rule is marked with the refusals it would have made', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await order(a, KEYS.shadowy)).status, 200, 'a shadow rule never refuses');
    await openView(browser.page, 'rules');
    const row = browser.page.locator('#rules tr[data-rule="shadowy/create-order"]');
    await row.locator('td', { hasText: /shadow: would have refused [45] / }).waitFor({ timeout: 3000 });
    await browser.shot('04-shadow-rule');
  });

  it('a rule the API refuses shows its message next to the field', async () => {
    const { page } = browser;
    // From the search box, Tab reaches the first row's Edit button; Enter fills the form and focuses it.
    await page.getByLabel('Search rules').focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Edit the rule for tenant editable on route create-order');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value), 'editable');
    await page.getByLabel('Capacity').fill('-1');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.locator('#rule-capacity-error', { hasText: 'capacity: must be at least 1' }).waitFor({ timeout: 3000 });
    assert.equal(await page.getByLabel('Capacity').getAttribute('aria-invalid'), 'true');
    await browser.shot('05-rule-refused');
  });

  it('a rule edited in the page is obeyed by the next requests', async () => {
    const { page } = browser;
    await page.getByLabel('Capacity').fill('2');
    await page.getByLabel('Refill per second').fill('0.01');
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.locator('#rule-form-status', { hasText: 'Saved the rule for tenant editable' }).waitFor({ timeout: 3000 });
    // Each gateway here has an embedded store of its own: the page says the other one never sees the change.
    assert.match((await page.locator('#rule-form-status').textContent()) ?? '', /in this instance's embedded store: this instance applies it at once; instances with stores of their own never see it/);
    await until(async () => (await order(a, KEYS.editable)).headers['x-ratelimit-limit'] === '2', 'the new limit of 2', 3000, 50);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await order(a, KEYS.editable)).status);
    assert.ok(statuses.includes(429), `refused once the limit of 2 is spent: ${statuses}`);
    await page.locator('#rules tr[data-rule="editable/create-order"] td', { hasText: '2, refill 0.01/s' }).waitFor({ timeout: 3000 });
    await browser.shot('06-rule-edited');
  });

  it('the rule search filters the table; a rule deleted in the page leaves the store', async () => {
    const { page } = browser;
    await page.getByLabel('Search rules').fill('shad');
    assert.deepEqual(await page.locator('#rules tbody tr').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.rule)), ['shadowy/create-order']);
    await page.getByLabel('Search rules').fill('');
    await page.getByRole('button', { name: 'Delete the rule for tenant meek on route create-order' }).click();
    await page.locator('#rule-form-status', { hasText: 'Deleted the rule for tenant meek' }).waitFor({ timeout: 3000 });
    await page.locator('#rules tr[data-rule="meek/create-order"]').waitFor({ state: 'detached', timeout: 3000 });
    const stored = await call(`${a.adminUrl}/rules/meek/create-order`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(stored.status, 404);
  });

  it('a key created in the page is shown once and works; revoked, it is refused', async () => {
    const { page } = browser;
    await openView(page, 'keys');
    await page.getByLabel('Tenant of the new key').fill('keyed');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key-value').textContent({ timeout: 3000 })) ?? '';
    await until(async () => (await order(a, key)).status === 200, 'the new key accepted', 3000, 50);
    await browser.shot('07-key-created');
    await page.getByRole('button', { name: /^Revoke key .* of tenant keyed$/ }).click();
    await page.locator('#keys tr[data-state="revoked"]').waitFor({ timeout: 3000 });
    await until(async () => (await order(a, key)).status === 401, 'the revoked key refused', 3000, 50);
    await browser.shot('08-key-revoked');
  });

  it('signing out leaves nothing of what the token showed, the clear key least of all; signing in again does not bring it back', async () => {
    const { page } = browser;
    await page.getByLabel('Tenant of the new key').fill('shown-once');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.locator('#new-key-value').textContent({ timeout: 3000 })) ?? '';
    assert.ok(key.length > 16);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.locator('#sign-in-section').waitFor({ state: 'visible' });
    const leftovers = await page.evaluate(() => ({
      html: document.body.innerHTML,
      rows: document.querySelectorAll('#signed-in tbody tr').length,
      charts: document.querySelectorAll('#charts .route-block').length,
    }));
    assert.ok(!leftovers.html.includes(key), 'the clear key is gone from the page');
    assert.deepEqual([leftovers.rows, leftovers.charts], [0, 0], 'no table row or chart left');
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#nav a[aria-current="page"]').getAttribute('data-nav-link'), 'keys', 'signed in again on the view the address names');
    await page.locator('#keys tbody tr').first().waitFor({ timeout: 3000 });
    assert.equal(await page.locator('#new-key').isVisible(), false);
    assert.ok(!(await page.evaluate(() => document.body.innerHTML)).includes(key), 'not shown again after signing back in');
  });

  it("a route no instance serves any more loses its chart instead of freezing on its last numbers", async () => {
    const { page } = browser;
    await openView(page, 'routes');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-dashboard-'));
    dirs.push(dir);
    const env = { UPSTREAM: upstream.url, SLUICE_REDIS_URL: redis.url, SLUICE_DATA_DIR: dir };
    const c = await startGateway(`routes:\n  - { id: reports-only, path: /reports, upstream: "\${UPSTREAM}", anonymous: true, limits: [{ id: reports-only, key: route, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 } }] }\n`, env, { ruleStore: true });
    try {
      for (let i = 0; i < 3; i++) await call(`${c.url}/reports`);
      await page.locator('[data-route="reports-only"]').waitFor({ timeout: 5000 });
    } finally {
      await c.close();
    }
    await page.locator('[data-route="reports-only"]').waitFor({ state: 'detached', timeout: 10_000 });
    await page.locator('[data-route="create-order"]').waitFor({ timeout: 3000 }); // the routes still served keep theirs
  });

  it('Redis stopped: the serving instance switches to fallback and says the cluster view is unavailable', async () => {
    await redis.kill();
    for (let i = 0; i < 40; i++) assert.notEqual((await order(a, KEYS.calm)).status, 500);
    const { page } = browser;
    await openView(page, 'instances');
    await page.locator('#instances tbody tr[data-mode="fallback"]').waitFor({ timeout: 5000 });
    assert.match((await page.locator('#scope').textContent()) ?? '', /cluster view unavailable/);
    const cells = await page.locator('#instances tbody tr[data-mode="fallback"] td').allTextContents();
    assert.deepEqual(cells.slice(5, 7), ['fallback', 'open'], 'mode and breaker in words, not only colour');
    assert.match((await page.locator('#degraded-banner').textContent()) ?? '', /Degraded: .* is in fallback, breaker open/, 'a banner names the degraded instance');
    await browser.shot('09-redis-down-fallback');
  });

  it('Redis back, no traffic at all: both instances show redis again by themselves', async () => {
    await redis.restart();
    const { page } = browser;
    // Nothing is sent to either gateway: only the breakers' own probes can find Redis back.
    await page.waitForFunction(() => document.querySelectorAll('#instances tbody tr[data-mode="redis"]').length === 2, undefined, { timeout: 15_000 });
    assert.equal(await page.locator('#instances tbody tr[data-mode="fallback"]').count(), 0);
    await browser.shot('10-redis-back-idle');
  });

  it('the admin API going away shows a clear message, not a blank page', async () => {
    await a.close();
    const { page } = browser;
    await page.locator('#alert', { hasText: 'The admin API is not answering' }).waitFor({ timeout: 5000 });
    assert.equal(await page.locator('#signed-in').isVisible(), true, 'the last data stays on screen');
    await browser.shot('10-admin-api-gone');
    const violations = browser.console.filter((line) => /Content Security Policy|pageerror/i.test(line));
    assert.deepEqual(violations, [], 'no CSP violation and no script error');
  });
});
