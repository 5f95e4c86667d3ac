// The page's plans section in Debian's Chromium: a write token makes a plan,
// gives it a limit, puts a tenant on it and sees the table say so; a bad rule
// is named on the page; the plan in use cannot be deleted.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { startGateway } from '../helpers/gateway-support.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';

const TOKEN = 'plans-page-bootstrap-token-0123456789';
const yaml = `
routes:
  - { id: orders, path: /orders, upstream: "http://127.0.0.1:9" }
defaultRule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 }
`;

describe("the page's plans section in a real browser", { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let app: RunningSluice;
  let browser: TestBrowser;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-plans-page-'));
    app = await startGateway(yaml, { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir }, { ruleStore: true, admin: true });
    browser = await launchBrowser();
    await browser.page.goto(`${app.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes a plan, sets its limit, puts a tenant on it, and refuses to delete it while in use', async () => {
    const { page } = browser;
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor({ timeout: 5000 });
    await openView(page, 'rules'); // the plans section joins the rules view
    await page.getByLabel('New plan name').fill('pro');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.locator('#plan-status', { hasText: 'Created plan pro.' }).waitFor({ timeout: 5000 });
    await page.getByLabel('Plan to change').fill('pro');
    await page.getByLabel('Plan limit (JSON').fill('{ "policy": "token_bucket", "capacity": 0, "refillPerSecond": 1 }');
    await page.getByRole('button', { name: 'Save limit' }).click();
    await page.locator('#plan-error', { hasText: 'body.capacity' }).waitFor({ timeout: 5000 });
    await page.getByLabel('Plan limit (JSON').fill('{ "policy": "token_bucket", "capacity": 50, "refillPerSecond": 5 }');
    await page.getByRole('button', { name: 'Save limit' }).click();
    await page.locator('#plan-status', { hasText: 'Saved: plan pro, global *.' }).waitFor({ timeout: 5000 });
    await page.getByLabel('Plan to put it on').fill('pro');
    await page.getByLabel('Its id (of the tenant or the key)').fill('acme');
    await page.getByRole('button', { name: 'Assign' }).click();
    await page.locator('#plan-status', { hasText: 'tenant acme is on plan pro.' }).waitFor({ timeout: 5000 });
    const cells = await page.locator('#plans tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 3), ['pro', 'every route: {"policy":"token_bucket","capacity":50,"refillPerSecond":5}', '1']);
    await page.getByRole('button', { name: 'Delete plan pro' }).click();
    await page.locator('#plan-error', { hasText: 'still assigned' }).waitFor({ timeout: 5000 });
  });
});
