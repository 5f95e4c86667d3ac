// The page's team sections in Debian's Chromium: a `write` token adds, edits and
// removes a per-key override, finds a tenant by id and by a pasted API key
// (hashed in the browser: every request the page sends is checked for the clear
// key), and reads the audit log with its own name on each change; a `read`
// token sees no edit action, and the API refuses the write it forces; an
// `admin` token creates (the clear token shown once, gone at sign-out), lists
// and revokes named tokens, which `write` and `read` tokens never see.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Request } from 'playwright-core';
import type { RunningSluice } from '../../src/app.js';
import { startGateway } from '../helpers/gateway-support.js';
import { hasChromium, launchBrowser, openView, type TestBrowser } from '../helpers/browser.js';
import { until } from '../helpers/poll.js';

const TOKEN = 'team-page-bootstrap-token-0123456789';
const yaml = `
routes:
  - { id: create-order, methods: [POST], path: /orders, upstream: "http://127.0.0.1:9" }
defaultRule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 }
rules:
  - { tenant: acme, route: create-order, policy: token_bucket, capacity: 5, refillPerSecond: 1 }
`;

async function api(app: RunningSluice, method: string, path: string, body?: object, token = TOKEN) {
  const res = await fetch(`${app.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${token}` }, body: body && JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe("the page's team sections in a real browser", { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let app: RunningSluice;
  let browser: TestBrowser;
  let dir: string;
  const tokens: Record<string, string> = {};
  let apiKey: string;
  const sent: Request[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-team-page-'));
    app = await startGateway(yaml, { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir }, { ruleStore: true, admin: true });
    for (const [name, role] of [['ana-writer', 'write'], ['rob-reader', 'read']]) tokens[role!] = (await api(app, 'POST', '/tokens', { name, role })).body.token;
    apiKey = (await api(app, 'POST', '/keys', { tenant: 'acme' })).body.key;
    browser = await launchBrowser();
    browser.page.on('request', (request) => void sent.push(request));
    await browser.page.goto(`${app.adminUrl}/ui/`);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function signIn(token: string): Promise<void> {
    const { page } = browser;
    if (await page.locator('#sign-out').isVisible()) await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#who', { hasText: 'Signed in as' }).waitFor({ timeout: 5000 });
  }

  it('a write token adds, edits and removes an override for a CIDR range', async () => {
    const { page } = browser;
    await signIn(tokens.write!);
    assert.equal(await page.locator('#who').textContent(), 'Signed in as ana-writer (write)');
    await openView(page, 'rules');
    await page.getByLabel('Limit id').fill('per-ip');
    await page.getByLabel('Applies to').selectOption('ip');
    await page.getByLabel('Value').fill('10.0.0.0/8');
    await page.getByLabel('Rule (JSON').fill('{ "policy": "token_bucket", "capacity": 50, "refillPerSecond": 5 }');
    await page.getByRole('button', { name: 'Save override' }).click();
    const cidrRow = page.locator('#overrides tbody tr', { hasText: '10.0.0.0/8' });
    await cidrRow.locator('td', { hasText: 'token_bucket: 50, refill 5/s' }).waitFor({ timeout: 3000 });
    await page.getByRole('button', { name: 'Edit the override of per-ip for ip:10.0.0.0/8' }).click();
    await page.getByLabel('Rule (JSON').fill('{ "policy": "token_bucket", "capacity": 80, "refillPerSecond": 5 }');
    await page.getByRole('button', { name: 'Save override' }).click();
    await cidrRow.locator('td', { hasText: 'token_bucket: 80, refill 5/s' }).waitFor({ timeout: 3000 });
    assert.equal(((await api(app, 'GET', '/overrides')).body.overrides[0]).rule.capacity, 80);
    await page.getByLabel('Value').fill('not an address');
    await page.getByRole('button', { name: 'Save override' }).click();
    await page.locator('#override-value-error', { hasText: 'selector' }).waitFor({ timeout: 3000 });
    await page.getByLabel('Applies to').selectOption('tenant');
    await page.getByLabel('Value').fill('acme');
    await page.getByRole('button', { name: 'Save override' }).click();
    await page.locator('#overrides tbody tr', { hasText: 'acme' }).waitFor({ timeout: 3000 });
    await browser.shot('team-01-overrides');
    await page.getByRole('button', { name: 'Remove the override of per-ip for ip:10.0.0.0/8' }).click();
    await cidrRow.waitFor({ state: 'detached', timeout: 3000 });
  });

  it('finds a tenant by id, and by a pasted key that never leaves the browser in clear', async () => {
    const { page } = browser;
    // One request of acme's through the gateway (its upstream refuses: 502, but the limit admitted and charged it).
    await fetch(`${app.url}/orders`, { method: 'POST', headers: { 'x-api-key': apiKey } });
    await until(async () => (await api(app, 'GET', '/tenants/acme/usage')).body.limits[0]?.lastHour?.requests === 1, 'the usage recorder flushed', 15_000, 50);
    await openView(page, 'tenants');
    await page.getByLabel('Tenant id').fill('acme');
    await page.getByRole('button', { name: 'Find tenant' }).click();
    await page.locator('#tenant-result h3', { hasText: 'Tenant acme' }).waitFor({ timeout: 3000 });
    // Its limits with what is left and what it consumed (docs/tenant-usage.md).
    await page.locator('#tenant-result h4', { hasText: 'Limits and usage' }).waitFor({ timeout: 3000 });
    const usageRow = await page.locator('#tenant-result table').first().locator('tbody tr').first().evaluate((tr) => [...tr.children].map((td) => td.textContent));
    assert.deepEqual([usageRow[0], usageRow[1], usageRow[4], usageRow[5]], ['create-order', 'create-order', '1 units, 1 requests, 0 refused', '1 units, 1 requests, 0 refused']);
    assert.match(usageRow[2] ?? '', /^[45] of 5$/, 'acme\'s rule: 5, refilled at 1/s since its request');
    assert.match(usageRow[3] ?? '', /^\d{4}-\d\d-\d\dT/, 'when it is full again');
    await page.getByLabel('Tenant id').fill('');
    sent.length = 0;
    await page.getByLabel('Or paste an API key').fill(apiKey);
    await page.getByRole('button', { name: 'Find its tenant' }).click();
    await page.locator('#tenant-result .found', { hasText: 'belongs to tenant acme' }).waitFor({ timeout: 3000 });
    assert.equal(await page.getByLabel('Or paste an API key').inputValue(), '', 'the field is emptied');
    assert.ok(sent.some((r) => r.url().includes('/tenants/by-key-hash/')), 'the hash was asked for');
    for (const request of sent) {
      const seen = `${request.url()} ${request.postData() ?? ''} ${JSON.stringify(await request.allHeaders())}`;
      assert.ok(!seen.includes(apiKey) && !seen.includes(encodeURIComponent(apiKey)), `the clear key in ${request.url()}`);
    }
    await page.getByLabel('Or paste an API key').fill('no-such-key-anywhere');
    await page.getByRole('button', { name: 'Find its tenant' }).click();
    await page.locator('#tenant-result', { hasText: 'No active key of the rule store has this hash' }).waitFor({ timeout: 3000 });
    await page.getByLabel('Or paste an API key').fill(apiKey);
    await page.getByRole('button', { name: 'Find its tenant' }).click();
    await page.locator('#tenant-result .found').waitFor({ timeout: 3000 });
    await browser.shot('team-02-tenant-lookup');
  });

  it('the audit log shows each change with its author, and a failed one as failed', async () => {
    const { page } = browser;
    await openView(page, 'audit');
    // Without asking: the page's own last write (the removal) is already listed.
    await page.locator('#audit tbody tr').first().locator('td', { hasText: 'DELETE /limits/{limitId}/overrides/{selector}' }).waitFor({ timeout: 3000 });
    await page.getByLabel('Kind').selectOption('override');
    await page.getByRole('button', { name: 'Show', exact: true }).click();
    // The filtered list replaces the whole one, which had four rows already: wait until every row is an override's.
    await page.waitForFunction(
      () => {
        const trs = [...document.querySelectorAll('#audit tbody tr')];
        return trs.length >= 4 && trs.every((tr) => tr.children[3]?.textContent?.includes('/overrides/'));
      },
      undefined,
      { timeout: 3000 },
    );
    const rows = await page.locator('#audit tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    assert.ok(rows.every((cells) => cells[1] === 'ana-writer'), JSON.stringify(rows));
    assert.deepEqual(rows.map((cells) => `${cells[3]!.split(' ')[0]} ${cells[6]!.split(':')[0]}`), ['DELETE ok', 'PUT ok', 'PUT failed', 'PUT ok', 'PUT ok']);
    assert.match(rows[3]![5]!, /"capacity":50.*→.*"capacity":80/);
    await browser.shot('team-03-audit');
  });

  it('signing out empties the overrides, the tenant found and the audit log', async () => {
    const { page } = browser;
    await page.getByRole('button', { name: 'Sign out' }).click();
    const left = await page.evaluate(() => ['#overrides tbody', '#audit tbody', '#tenant-result', '#who'].map((s) => document.querySelector(s)?.textContent ?? ''));
    assert.deepEqual(left, ['', '', '', '']);
    assert.equal(await page.evaluate(() => document.body.dataset.role), undefined);
  });

  it('a read token sees every section but no edit action, and the API refuses what it forces', async () => {
    const { page } = browser;
    await signIn(tokens.read!);
    assert.equal(await page.locator('#who').textContent(), 'Signed in as rob-reader (read: view only)');
    // Each hidden control is looked for in its own view, shown: hidden by the role, not by the navigation.
    await openView(page, 'rules');
    await page.locator('#overrides tbody tr', { hasText: 'acme' }).waitFor({ timeout: 3000 });
    await page.locator('#rules tbody tr', { hasText: 'acme' }).waitFor({ timeout: 3000 });
    for (const hidden of ['#override-form', '#rule-form', '#overrides tbody button', '#rules tbody button']) {
      assert.equal(await page.locator(hidden).first().isVisible(), false, `${hidden} is hidden`);
    }
    await openView(page, 'keys');
    await page.locator('#keys tbody tr').first().waitFor({ timeout: 3000 });
    for (const hidden of ['#key-form', '#keys tbody button']) assert.equal(await page.locator(hidden).first().isVisible(), false, `${hidden} is hidden`);
    await openView(page, 'audit');
    assert.equal(await page.locator('#audit-form').isVisible(), true);
    const forced = await page.evaluate(async (token) => {
      const res = await fetch('/limits/per-ip/overrides/tenant:acme', { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, body: await res.json() };
    }, tokens.read!);
    assert.equal(forced.status, 403);
    assert.equal(forced.body.error.code, 'ERR_FORBIDDEN');
    assert.equal((await api(app, 'GET', '/overrides')).body.overrides.length, 1, 'the override is still there');
    await browser.shot('team-04-read-only');
    // The refused calls above log "Failed to load resource"; nothing else may fail (a CSP violation, a script error).
    assert.deepEqual(browser.console.filter((m) => (m.startsWith('error') || m.startsWith('pageerror')) && !m.includes('Failed to load resource')), []);
  });

  it('an admin token creates, lists and revokes a named token; the clear token is gone at sign-out', async () => {
    const { page } = browser;
    await signIn(TOKEN);
    assert.equal(await page.locator('#who').textContent(), 'Signed in as bootstrap (admin)');
    await openView(page, 'keys');
    await page.locator('#tokens tbody tr[data-token="ana-writer"]').waitFor({ timeout: 3000 });
    await page.getByLabel('Name of the new token').fill('cara-ci');
    await page.getByLabel('Role of the new token').selectOption('write');
    await page.getByRole('button', { name: 'Create token' }).click();
    const clear = (await page.locator('#new-token-value').textContent({ timeout: 3000 })) ?? '';
    const listed = page.locator('#tokens tbody tr[data-token="cara-ci"]');
    await listed.locator('td', { hasText: 'write' }).waitFor({ timeout: 3000 });
    assert.deepEqual((await api(app, 'GET', '/whoami', undefined, clear)).body, { name: 'cara-ci', role: 'write' }, 'the token shown is the one created');
    await page.getByLabel('Name of the new token').fill('cara-ci');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.locator('#token-form-error', { hasText: 'exists' }).waitFor({ timeout: 3000 });
    await browser.shot('team-05-tokens');
    await page.getByRole('button', { name: 'Revoke token cara-ci' }).click();
    await listed.waitFor({ state: 'detached', timeout: 3000 });
    await until(async () => (await api(app, 'GET', '/whoami', undefined, clear)).status === 401, 'the revoked token is refused', 3000, 50);
    await page.getByRole('button', { name: 'Sign out' }).click();
    const left = await page.evaluate(() => ['#new-token', '#tokens tbody'].map((s) => document.querySelector(s)?.textContent ?? ''));
    assert.deepEqual(left, ['', ''], 'the clear token and the list are emptied');
    await signIn(TOKEN);
    await page.locator('#tokens tbody tr[data-token="ana-writer"]').waitFor({ timeout: 3000 });
    assert.equal(await page.locator('#new-token-value').count(), 0, 'signing back in does not bring the clear token back');
  });

  it('write and read tokens see no token controls, and the API refuses them 403', async () => {
    const { page } = browser;
    for (const role of ['write', 'read']) {
      sent.length = 0;
      await signIn(tokens[role]!);
      // On the keys view, where the tokens section would be: hidden by the role, not by the navigation.
      await openView(page, 'keys');
      await page.locator('#keys tbody tr').first().waitFor({ timeout: 3000 });
      for (const hidden of ['#tokens-section', '#token-form', '#tokens']) assert.equal(await page.locator(hidden).isVisible(), false, `${hidden} hidden for ${role}`);
      await openView(page, 'audit');
      await page.locator('#audit tbody tr').first().waitFor({ timeout: 3000 });
      assert.ok(!sent.some((request) => new URL(request.url()).pathname === '/tokens'), `the page asks no /tokens for ${role}`);
      assert.equal((await api(app, 'GET', '/tokens', undefined, tokens[role])).status, 403, `GET /tokens, ${role}`);
      assert.equal((await api(app, 'POST', '/tokens', { name: `by-${role}`, role: 'admin' }, tokens[role])).status, 403, `POST /tokens, ${role}`);
      assert.equal((await api(app, 'DELETE', '/tokens/ana-writer', undefined, tokens[role])).status, 403, `DELETE /tokens, ${role}`);
    }
    await browser.shot('team-06-no-tokens-for-read');
    assert.deepEqual((await api(app, 'GET', '/tokens')).body.tokens.map((t: { name: string }) => t.name), ['ana-writer', 'rob-reader']);
  });
});
