// The operator's page's front door and navigation, in Debian's Chromium, over
// two gateways on one real redis-server: the overview (every instance's mode
// and breaker, the routes refusing now, the most limited tenants, what is
// degraded or behind) fits one 1280x800 screen and links to each view; the
// view lives in the address (a reload and the back button keep it); the
// keyboard reaches every view; only the view shown asks for its data; on a
// 400-px window nothing overflows sideways. Screenshots go to test-output/.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';
import { until } from '../helpers/poll.js';

const TOKEN = 'page-nav-admin-token-0123456789ab';
const NOISY = ['n1', 'n2', 'n3', 'n4', 'n5', 'n6'];
const yaml = `
routes:
  - { id: orders, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
  - { id: reports, path: /reports, upstream: "\${UPSTREAM}" }
tenants:
  unknownKeys: reject
  keys:
    - { key: calm-key-0000001, tenant: calm }
${NOISY.map((t) => `    - { key: ${t}-key-00000001, tenant: ${t} }`).join('\n')}
defaultRule: { policy: token_bucket, capacity: 1000, refillPerSecond: 100 }
rules:
${NOISY.map((t) => `  - { tenant: ${t}, route: orders, policy: token_bucket, capacity: 1, refillPerSecond: 0.01 }`).join('\n')}
`;
const VIEWS = ['overview', 'routes', 'tenants', 'instances', 'rules', 'keys', 'audit', 'notifications', 'explain'];

describe("the operator's page: overview and navigation", { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let a: RunningSluice;
  let b: RunningSluice;
  let browser: TestBrowser;
  const dirs: string[] = [];
  const asked: string[] = [];

  const order = (app: RunningSluice, tenant: string) => call(`${app.url}/orders`, { method: 'POST', headers: { 'x-api-key': `${tenant}-key-${tenant === 'calm' ? '0000001' : '00000001'}` } });
  const current = () => browser.page.locator('#nav a[aria-current="page"]').getAttribute('data-nav-link');
  const visibleViews = () => browser.page.locator('section[data-nav]').evaluateAll((sections) => [...new Set(sections.filter((s) => !(s as HTMLElement).hidden).map((s) => (s as HTMLElement).dataset.nav))]);
  const signIn = async () => {
    await browser.page.getByLabel('Admin token').fill(TOKEN);
    await browser.page.keyboard.press('Enter');
    await browser.page.locator('#signed-in').waitFor({ state: 'visible' });
  };
  const countAsked = (path: string) => asked.filter((p) => p === path).length;

  before(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startUpstream()]);
    const start = (admin: boolean) => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-page-nav-'));
      dirs.push(dir);
      const env: Record<string, string> = { UPSTREAM: upstream.url, SLUICE_REDIS_URL: redis.url, SLUICE_DATA_DIR: dir };
      if (admin) Object.assign(env, { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN });
      return startGateway(yaml, env, { ruleStore: true, admin });
    };
    a = await start(true);
    b = await start(false);
    browser = await launchBrowser();
    await browser.page.setViewportSize({ width: 1280, height: 800 });
    browser.page.on('request', (request) => void asked.push(new URL(request.url()).pathname));
    await browser.page.goto(`${a.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    redis?.resume();
    await Promise.allSettled([a?.close(), b?.close()]);
    await Promise.allSettled([redis?.stop(), upstream?.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('opens on the overview: both instances on redis, the refusing route, the most limited tenants, nothing degraded, on one 1280x800 screen', async () => {
    const { page } = browser;
    await signIn();
    assert.equal(await current(), 'overview');
    assert.deepEqual(await visibleViews(), ['overview'], 'only the overview shows');
    assert.deepEqual(await page.locator('#nav a').evaluateAll((links) => links.map((l) => (l as HTMLElement).dataset.navLink)), VIEWS, 'one link per view, from the sections');
    let refused = 0;
    for (const [i, tenant] of [...NOISY, ...NOISY, ...NOISY].entries()) if ((await order(i % 2 === 0 ? a : b, tenant)).status === 429) refused++;
    for (let i = 0; i < 4; i++) await order(b, 'calm');
    assert.ok(refused >= NOISY.length, `refusals: ${refused}`);
    await until(async () => {
      const rows = await page.locator('#sum-instances tbody tr[data-instance]').evaluateAll((trs) => trs.map((tr) => `${(tr as HTMLElement).dataset.mode}/${(tr as HTMLElement).dataset.breaker}`));
      return rows.length === 2 && rows.every((r) => r === 'redis/closed');
    }, 'both instances listed, redis and closed', 5000, 50);
    const route = page.locator('#sum-routes tbody tr[data-sum-route="orders"] td');
    await until(async () => Number(await route.nth(2).textContent()) === refused, `orders refused ${refused} times in the last minute`, 5000, 50);
    assert.equal(await page.locator('#sum-routes tbody tr[data-sum-route="reports"]').count(), 0, 'a route refusing nothing is not listed');
    await until(async () => (await page.locator('#sum-tenants tbody tr').count()) === 6, 'five tenants and one more', 5000, 50);
    const tenants = await page.locator('#sum-tenants tbody tr td:first-child').allTextContents();
    assert.ok(tenants.slice(0, 5).every((t) => NOISY.includes(t)), tenants.join());
    assert.equal(tenants[5], 'and 1 more tenants');
    assert.match((await page.locator('#attention').textContent()) ?? '', /Nothing degraded or behind/);
    const fits = await page.evaluate(() => {
      const box = document.getElementById('overview-section')!.getBoundingClientRect();
      return { height: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth, bottom: box.bottom, inner: [innerWidth, innerHeight] };
    });
    assert.deepEqual(fits.inner, [1280, 800]);
    assert.ok(fits.height <= 800 && fits.bottom <= 800 && fits.width <= 1280, `the overview fits one screen: ${JSON.stringify(fits)}`);
    await browser.shot('nav-01-overview');
  });

  it("each of the overview's links lands on its view; back and forward follow", async () => {
    const { page } = browser;
    for (const [link, view, shown] of [
      ['routes', 'routes', '#charts [data-route="orders"]'],
      ['tenants', 'tenants', '#top tbody tr'],
      ['instances', 'instances', '#instances tbody tr[data-mode="redis"]'],
    ] as const) {
      await page.locator(`#overview-section a[data-overview-link="${link}"]`).click();
      await page.locator(shown).first().waitFor({ timeout: 3000 });
      assert.equal(new URL(page.url()).hash, `#/${view}`);
      assert.equal(await current(), view);
      assert.deepEqual(await visibleViews(), [view]);
      assert.equal(await page.evaluate(() => document.activeElement?.tagName), 'H2', 'the view heading has the focus');
      await page.goBack();
      await page.locator('#overview-section').waitFor({ state: 'visible', timeout: 3000 });
      assert.equal(await current(), 'overview');
    }
    await page.goForward();
    await page.locator('#instances').waitFor({ state: 'visible', timeout: 3000 });
    assert.equal(await current(), 'instances');
  });

  it('a reload keeps the view: signed in again, the page opens where it was', async () => {
    const { page } = browser;
    await openView(page, 'rules');
    await page.locator('#rules tbody tr[data-rule="n1/orders"]').waitFor({ timeout: 3000 });
    await page.reload();
    assert.equal(new URL(page.url()).hash, '#/rules');
    await signIn();
    assert.equal(await current(), 'rules');
    assert.deepEqual(await visibleViews(), ['rules']);
    await page.locator('#rules tbody tr[data-rule="n1/orders"]').waitFor({ timeout: 3000 });
  });

  it('the keyboard reaches every view, and the view link shown is marked current', async () => {
    const { page } = browser;
    await page.locator('#nav a').first().focus();
    for (const view of VIEWS) {
      assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.navLink), view);
      await page.keyboard.press('Enter');
      await page.locator(`section[data-nav="${view}"]`).first().waitFor({ state: 'visible', timeout: 3000 });
      assert.equal(await current(), view);
      await page.locator(`#nav a[data-nav-link="${view}"]`).focus();
      await page.keyboard.press('Tab');
    }
    assert.equal(await page.locator('#nav a[aria-current]').count(), 1, 'one current link');
  });

  it('only the view shown asks for its data: the history while the routes view shows, never on the overview', async () => {
    const { page } = browser;
    await openView(page, 'overview');
    await sleep(300);
    asked.length = 0;
    await sleep(6000);
    assert.ok(countAsked('/ui/api/overview') >= 4, `the overview is polled: ${asked.join()}`);
    for (const path of ['/ui/api/history', '/rules', '/keys', '/overrides', '/audit', '/tokens', '/notifications']) assert.equal(countAsked(path), 0, `${path} not asked on the overview`);
    await openView(page, 'routes');
    await until(async () => countAsked('/ui/api/history') === 1, 'the history asked at once', 2000, 50);
    await sleep(5500);
    assert.ok(countAsked('/ui/api/history') >= 2, 'then every 5 s');
    await openView(page, 'overview');
    await sleep(300);
    const seen = countAsked('/ui/api/history');
    await sleep(5500);
    assert.equal(countAsked('/ui/api/history'), seen, 'the history stops with its view');
  });

  it('a 400-px window: the navigation wraps, wide tables scroll in their box, the page never scrolls sideways', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 400, height: 800 });
    try {
      for (const view of VIEWS) {
        await openView(page, view);
        await sleep(view === 'routes' ? 1500 : 400);
        const sizes = await page.evaluate(() => ({
          doc: document.documentElement.scrollWidth,
          body: document.body.scrollWidth,
          inner: innerWidth,
          // What sticks out, to name in the failure: elements past the right edge whose parent is not.
          out: [...document.querySelectorAll('body *')]
            .filter((el) => {
              if (el.getBoundingClientRect().right <= innerWidth + 1) return false;
              for (let e = el.parentElement; e && e !== document.body; e = e.parentElement) if (getComputedStyle(e).overflowX !== 'visible') return false;
              return true;
            })
            .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className}`)
            .slice(0, 5),
        }));
        assert.ok(sizes.doc <= sizes.inner && sizes.body <= sizes.inner, `${view}: no horizontal overflow ${JSON.stringify(sizes)}`);
        const links = await page.locator('#nav a').evaluateAll((all) => all.map((l) => l.getBoundingClientRect().right));
        assert.ok(links.every((right) => right <= 400), `${view}: every link inside the window ${links}`);
        await browser.shot(`nav-02-narrow-${view}`);
      }
      await openView(page, 'instances');
      const box = await page.locator('#instances').evaluate((table) => ({ scroll: table.parentElement!.scrollWidth, client: table.parentElement!.clientWidth, overflow: getComputedStyle(table.parentElement!).overflowX }));
      assert.ok(box.scroll > box.client && box.overflow === 'auto', `the instance table scrolls inside its box: ${JSON.stringify(box)}`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('Redis paused: the overview says which instance is in fallback with its breaker open and its history behind, each linking to its view', async () => {
    const { page } = browser;
    await openView(page, 'overview');
    redis.pause();
    try {
      await until(async () => {
        await order(a, 'calm');
        const text = (await page.locator('#attention').textContent()) ?? '';
        return /is in fallback, breaker open/.test(text) && /history is behind: \d+ batch/.test(text);
      }, 'fallback and history behind on the overview', 20_000, 50);
      assert.equal(await page.locator('#attention-card').getAttribute('data-level'), 'bad');
      assert.match((await page.locator('#attention').textContent()) ?? '', /Cluster view unavailable/);
      assert.equal(await page.locator('#sum-instances tbody tr[data-mode="fallback"]').getAttribute('class'), 'trouble-bad');
      const fits = await page.evaluate(() => document.documentElement.scrollHeight);
      assert.ok(fits <= 800, `still one screen with the trouble listed: ${fits}`);
      await browser.shot('nav-03-overview-degraded');
      await page.locator('#attention li', { hasText: 'is in fallback' }).getByRole('link', { name: 'See Instances' }).click();
      await page.locator('#instances tbody tr[data-mode="fallback"]').waitFor({ timeout: 3000 });
      assert.equal(await current(), 'instances');
      await page.goBack();
      await page.locator('#attention li', { hasText: 'history is behind' }).getByRole('link', { name: 'See Routes and history' }).click();
      await page.locator('#history-title').waitFor({ state: 'visible', timeout: 3000 });
      assert.equal(await current(), 'routes');
      await page.goBack();
    } finally {
      redis.resume();
    }
    await until(async () => {
      await order(a, 'calm');
      return /Nothing degraded or behind/.test((await page.locator('#attention').textContent()) ?? '');
    }, 'nothing degraded or behind once Redis is back', 20_000, 50);
    const problems = browser.console.filter((line) => /Content Security Policy|pageerror/i.test(line));
    assert.deepEqual(problems, [], 'no CSP violation, no script error');
  });

  it('a section that names no view gets a view and a link of its own, and shows only there', async () => {
    const { page } = browser;
    // The page as served, with one section more that has no data-nav (as a later section might be added).
    await page.route('**/ui/', async (route) => {
      const served = await route.fetch();
      const html = (await served.text()).replace('<section aria-labelledby="audit-title"', '<section id="extra-section"><h2>Extra things</h2><p id="extra-body">extra</p></section>\n      <section aria-labelledby="audit-title"');
      await route.fulfill({ response: served, body: html });
    });
    try {
      await page.goto(`${a.adminUrl}/ui/#/extra`); // the same document (only the hash differs): the reload loads the page anew
      await page.reload();
      await signIn();
      assert.equal(await current(), 'extra');
      assert.equal(await page.locator('#nav a[data-nav-link="extra"]').textContent(), 'Extra things');
      assert.deepEqual(await visibleViews(), ['extra']);
      await openView(page, 'overview');
      assert.equal(await page.locator('#extra-body').isVisible(), false, 'not on the other views');
    } finally {
      await page.unroute('**/ui/');
    }
  });
});
