// The page's blocked-keys table in Debian's Chromium, with a real block made
// through the gateway (a limit's penalty box): the table shows the key hashed
// with its tenant, limit and time left; a read token sees no Lift button; an
// admin token lifts the block (confirmed), the table empties, the audit log has
// the lift and the gateway lets the key in again once its bucket is refilled.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';

const TOKEN = 'blocks-page-bootstrap-token-0123456789';
const ACME = { 'x-api-key': 'key-acme-blocks-page-1' };
const yaml = `
routes:
  - id: login
    path: /login
    upstream: \${UP}
    limits:
      - id: login
        key: tenant
        rule: { policy: token_bucket, capacity: 1, refillPerSecond: 0.001 }
        penalty: { after: 1, withinMs: 600000, blockMs: 3600000 }
tenants:
  keys:
    - { key: key-acme-blocks-page-1, tenant: acme }
`;

describe("the page's blocked keys in a real browser", { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let app: RunningSluice;
  let upstream: TestUpstream;
  let browser: TestBrowser;
  let dir: string;
  let readToken: string;
  const admin = (method: string, path: string, body?: unknown) => fetch(`${app.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const signIn = async (page: Page, token: string) => {
    if (await page.locator('#sign-out').isVisible()) await page.locator('#sign-out').click();
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor({ timeout: 5000 });
    await openView(page, 'tenants'); // the blocked keys are in the tenants view
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-blocks-page-'));
    upstream = await startUpstream((_req, res) => res.end('ok'));
    app = await startGateway(yaml, { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir, UP: upstream.url }, { ruleStore: true, admin: true });
    readToken = ((await (await admin('POST', '/tokens', { name: 'viewer', role: 'read' })).json()) as { token: string }).token;
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await call(`${app.url}/login`, { headers: ACME })).status);
    assert.deepEqual(statuses, [200, 429], 'the first refusal blocks the key');
    browser = await launchBrowser();
    await browser.page.goto(`${app.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows the blocked key with its time left; a read token sees no Lift button', async () => {
    const { page } = browser;
    await signIn(page, readToken);
    const first = page.locator('#blocks tbody tr').first();
    await first.locator('td', { hasText: 'acme' }).waitFor({ timeout: 5000 });
    const cells = await first.locator('td').allTextContents();
    assert.match(cells[0]!, /^~h\.[0-9a-f]{32}$/, 'the key hashed');
    assert.deepEqual(cells.slice(1, 3), ['acme', 'login']);
    assert.match(cells[3]!, /^(1h 00m 00s|[0-5]?\dm [0-5]\ds)$/, 'the time left');
    assert.match(cells[4]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const lift = first.locator('button[data-lift]');
    assert.equal(await lift.count(), 1, 'the row has its button');
    assert.equal(await lift.isVisible(), false, 'hidden for a read token');
  });

  it('an admin token lifts the block: the table empties, the audit log has it, the key is let in', async () => {
    const { page } = browser;
    await signIn(page, TOKEN);
    const first = page.locator('#blocks tbody tr').first();
    await first.locator('td', { hasText: 'acme' }).waitFor({ timeout: 5000 });
    const id = (await first.locator('td').first().textContent())!;
    // The confirmation is accepted by the browser helper (browser.ts).
    await page.getByRole('button', { name: `Lift block ${id}` }).click();
    await page.locator('#blocks tbody', { hasText: 'no key is blocked' }).waitFor({ timeout: 5000 });

    const audit = (await (await admin('GET', '/audit?kind=bucket')).json()) as { entries: { action: string; target: string }[] };
    assert.equal(audit.entries.find((entry) => entry.action === 'DELETE /blocks/{id}')?.target, id, 'the lift is audited');
    assert.equal((await admin('DELETE', '/buckets/acme/login')).status, 204);
    assert.equal((await call(`${app.url}/login`, { headers: ACME })).status, 200, 'lifted and refilled: admitted');
    await browser.shot('blocks-01-lifted');
  });
});
