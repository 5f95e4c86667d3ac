// The page's lists section in Debian's Chromium: a write token adds a deny
// entry (a bad CIDR is named on the page first), sees it in the table and
// refused by the gateway, then deletes it and the gateway lets the client in.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { eventually } from '../helpers/poll.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';

const TOKEN = 'lists-page-bootstrap-token-0123456789';
const yaml = `
routes:
  - id: orders
    path: /orders
    upstream: \${UP}
    anonymous: true
    limits:
      - { id: orders-ceiling, key: route, rule: { policy: fixed_window, limit: 1000, windowMs: 600000 } }
clientIp: { trustedProxies: [127.0.0.1/32] }
`;

describe("the page's lists section in a real browser", { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let app: RunningSluice;
  let upstream: TestUpstream;
  let browser: TestBrowser;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-lists-page-'));
    upstream = await startUpstream((_req, res) => res.end('ok'));
    app = await startGateway(yaml, { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir, UP: upstream.url }, { ruleStore: true, admin: true });
    browser = await launchBrowser();
    await browser.page.goto(`${app.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('adds a deny entry the gateway applies, names a bad field, and deletes the entry', async () => {
    const { page } = browser;
    const client = () => call(`${app.url}/orders`, { headers: { 'x-forwarded-for': '203.0.113.9' } });
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor({ timeout: 5000 });
    await openView(page, 'rules'); // the lists section joins the rules view
    await page.locator('#list-entries tbody', { hasText: 'no entries stored' }).waitFor({ timeout: 5000 });
    await page.getByLabel('Who it matches', { exact: false }).fill('203.0.113.0/33');
    await page.getByLabel('Reason, for operators').fill('scanner network');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.locator('#list-error', { hasText: 'body.cidr' }).waitFor({ timeout: 5000 });
    await page.getByLabel('Who it matches', { exact: false }).fill('203.0.113.0/24');
    await page.getByRole('button', { name: 'Add entry' }).click();
    await page.locator('#list-status', { hasText: 'Added deny entry' }).waitFor({ timeout: 5000 });
    const cells = await page.locator('#list-entries tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(cells.slice(1, 5), ['deny', '203.0.113.0/24', 'every route', 'scanner network']);
    await eventually(async () => assert.equal((await client()).status, 403), 1000);
    await page.getByRole('button', { name: `Delete list entry ${cells[0]}` }).click();
    await page.locator('#list-status', { hasText: `Deleted list entry ${cells[0]}.` }).waitFor({ timeout: 5000 });
    await page.locator('#list-entries tbody', { hasText: 'no entries stored' }).waitFor({ timeout: 5000 });
    await eventually(async () => assert.equal((await client()).status, 200), 1000);
  });
});
