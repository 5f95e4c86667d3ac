// The page's notifications view in Debian's Chromium: a tenant crosses 80 %
// of a limit with notify, the receiver gets the event, and the view lists it
// as sent (tenant, limit, threshold), never the receiver's URL.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type Receiver, startReceiver } from '../helpers/notify-receiver.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';

const TOKEN = 'notify-page-bootstrap-token-0123456789';

describe("the page's notifications view in a real browser", { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let app: RunningSluice;
  let upstream: TestUpstream;
  let receiver: Receiver;
  let browser: TestBrowser;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-notify-page-'));
    [upstream, receiver] = await Promise.all([startUpstream(), startReceiver()]);
    const yaml = `
routes:
  - id: search
    path: /search
    upstream: "${upstream.url}"
    limits:
      - id: daily
        rule: { policy: fixed_window, limit: 5, windowMs: 3600000 }
        notify: { at: [0.8], url: "${receiver.url}", secret: page-test-secret }
tenants: { keys: [{ key: acme-key-0001, tenant: acme }] }
`;
    app = await startGateway(yaml, { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir }, { ruleStore: true, admin: true });
    browser = await launchBrowser();
    await browser.page.goto(`${app.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await Promise.all([upstream?.close(), receiver?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the event sent when a tenant crossed 80 %', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await call(`${app.url}/search`, { headers: { 'x-api-key': 'acme-key-0001' } })).status, 200);
    await receiver.waitFor(1);
    const { page } = browser;
    await page.getByLabel('Admin token').fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor({ timeout: 5000 });
    await openView(page, 'notifications');
    await page.locator('#notifications tbody tr[data-outcome="sent"]').waitFor({ timeout: 10_000 });
    const cells = await page.locator('#notifications tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(cells.slice(1, 7), ['acme', 'daily', 'search', '80 %', 'sent', '1']);
    assert.doesNotMatch((await page.locator('#notifications').textContent()) ?? '', /127\.0\.0\.1|page-test-secret/);
  });
});
