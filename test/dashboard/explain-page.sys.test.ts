// The page's "Explain a request" form in Debian's Chromium: a `read` token
// fills a sample (path, a header with the API key, the client address), and the
// page shows what GET /explain answers: the outcome, the routes and each
// limit with its bucket's Redis key and its state now. The headers field (it
// held the key) is emptied, the key never shows on the page, and a bad field
// is named.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { startGateway } from '../helpers/gateway-support.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';

const TOKEN = 'explain-page-bootstrap-token-0123456789';
const KEY = 'explain-page-key-shop-a';
const yaml = `
routes:
  - id: login
    methods: [POST]
    path: /login
    upstream: "http://127.0.0.1:9"
    anonymous: true
    limits: [{ id: login-per-ip, key: ip, rule: { policy: leaky_bucket, ratePerSecond: 1, burst: 2 } }]
  - id: orders
    path: /orders/*
    upstream: "http://127.0.0.1:9"
    limits: [{ id: orders-per-tenant, key: tenant, rule: { policy: token_bucket, capacity: 9, refillPerSecond: 1 } }]
tenants:
  keys: [{ key: ${KEY}, tenant: shop-a }]
defaultRule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 }
`;

describe("the page's explain form in a real browser", { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let app: RunningSluice;
  let browser: TestBrowser;
  let dir: string;
  let readToken: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-explain-page-'));
    app = await startGateway(yaml, { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir }, { ruleStore: true, admin: true });
    const created = await fetch(`${app.adminUrl}/tokens`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ name: 'viewer', role: 'read' }) });
    readToken = (await created.json()).token;
    browser = await launchBrowser();
    await browser.page.goto(`${app.adminUrl}/ui/`);
    await browser.page.getByLabel('Admin token').fill(readToken);
    await browser.page.getByRole('button', { name: 'Sign in' }).click();
    await browser.page.locator('#who', { hasText: 'Signed in as' }).waitFor({ timeout: 5000 });
    await openView(browser.page, 'explain');
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('explains a request: outcome, routes, each limit with its bucket and state', async () => {
    const { page } = browser;
    await page.getByLabel('Path (and query)').fill('/orders/42');
    await page.getByLabel('Client address (the connecting peer)').fill('192.0.2.8');
    await page.getByLabel('Request headers, one per line (X-Api-Key: …)').fill(`X-Api-Key: ${KEY}`);
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator('#explain-outcome').waitFor({ timeout: 5000 });
    assert.match((await page.locator('#explain-outcome').textContent()) ?? '', /^200: decided by 1 limit/);
    const limits = (await page.locator('#explain-limits').textContent()) ?? '';
    assert.match(limits, /orders-per-tenant/);
    assert.match(limits, /rl:\{shop-a\} orders-per-tenant/);
    assert.match(limits, /9\/9, reset in 0 ms/);
    assert.equal(await page.getByLabel('Request headers, one per line (X-Api-Key: …)').inputValue(), '', 'the field that held the key is emptied');
    assert.ok(!(await page.content()).includes(KEY), 'the key is nowhere on the page');
    await browser.shot('explain');
  });

  it('shows a skipped limit and the route mismatch reasons', async () => {
    const { page } = browser;
    await page.getByLabel('Method').fill('POST');
    await page.getByLabel('Path (and query)').fill('/login');
    await page.getByLabel('Client address (the connecting peer)').fill('');
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator('#explain-limits', { hasText: 'no_client_address' }).waitFor({ timeout: 5000 });
    assert.match((await page.locator('#explain-result').textContent()) ?? '', /orders.*path/);
  });

  it('names a bad field', async () => {
    const { page } = browser;
    await page.getByLabel('Client address (the connecting peer)').fill('not-an-address');
    await page.getByRole('button', { name: 'Explain' }).click();
    await page.locator('#explain-result .field-error', { hasText: 'ip:' }).waitFor({ timeout: 5000 });
    assert.deepEqual(browser.console.filter((m) => (m.startsWith('error') || m.startsWith('pageerror')) && !m.includes('Failed to load resource')), []);
  });
});
