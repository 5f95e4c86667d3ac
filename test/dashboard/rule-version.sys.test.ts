// The rule-set version on the operator's page, in Chromium, over two real
// gateways on one real PostgreSQL (and one redis-server for the page's cluster
// view): every change raises the version in its own transaction, both
// instances catch up and show it; an instance whose connection to the store
// is cut (a partition in a proxy in front of PostgreSQL) stays at its version
// and shows "behind by K", then catches up once the partition heals.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { startGateway } from '../helpers/gateway-support.js';
import { type DelayProxy, startDelayProxy } from '../helpers/delay-proxy.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { createDatabase, sql } from '../helpers/postgres-db.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { hasChromium, launchBrowser, OUTPUT_DIR, openView, type TestBrowser } from '../helpers/browser.js';
import { until } from '../helpers/poll.js';

const TOKEN = 'rule-version-admin-token-0123456789';
const yaml = `
routes:
  - { id: orders, path: /orders, upstream: "http://127.0.0.1:9" }
database: { statementTimeoutMs: 1000, connectTimeoutMs: 1000 }
defaultRule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 }
`;
const NO_DELAY = { ms: 0 };

describe('the rule-set version on the operator page', { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let postgres: PostgresServer;
  let redis: RedisServer;
  let proxy: DelayProxy;
  let url: string;
  let a: RunningSluice;
  let b: RunningSluice;
  let browser: TestBrowser;
  const dirs: string[] = [];

  const put = (app: RunningSluice, path: string, body: object) =>
    fetch(`${app.adminUrl}${path}`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((res) => res.status);
  const storeVersion = async () => Number((await sql(url, 'SELECT version FROM rule_set_version')).rows[0].version);
  /** Each instance's version cell as the page shows it: id → [version, behind]. */
  const shown = () =>
    browser.page.locator('#instances tbody tr[data-state="live"]').evaluateAll((rows) =>
      Object.fromEntries(rows.map((r) => {
        const cell = r.querySelector<HTMLElement>('[data-version]');
        return [(r as HTMLElement).dataset.instance, [Number(cell?.dataset.version), Number(cell?.dataset.behind)]];
      })),
    );
  const idOf = async (app: RunningSluice) => ((await (await fetch(`${app.adminUrl}/ui/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { self: string }).self;

  before(async () => {
    [postgres, redis] = await Promise.all([startPostgres(), startRedis()]);
    url = await createDatabase(postgres);
    proxy = await startDelayProxy({ targetPort: postgres.port, toServer: NO_DELAY, toClient: NO_DELAY });
    const start = (databaseUrl: string) => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-rule-version-'));
      dirs.push(dir);
      const env = { SLUICE_DATABASE_URL: databaseUrl, SLUICE_REDIS_URL: redis.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
      return startGateway(yaml, env, { ruleStore: true, admin: true });
    };
    a = await start(url);
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    b = await start(viaProxy.toString());
    browser = await launchBrowser();
    await browser.page.goto(`${a.adminUrl}/ui/`);
    await browser.page.getByLabel('Admin token').fill(TOKEN);
    await browser.page.keyboard.press('Enter');
    await browser.page.locator('#signed-in').waitFor({ state: 'visible' });
    await openView(browser.page, 'instances');
  });
  after(async () => {
    await browser?.close();
    await proxy?.heal().catch(() => {});
    await Promise.allSettled([a?.close(), b?.close()]);
    await proxy?.close();
    await Promise.allSettled([redis?.stop(), postgres?.stop()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('every change raises the version in the store; both instances apply it and show it', async () => {
    const [idA, idB] = [await idOf(a), await idOf(b)];
    const before = await storeVersion();
    assert.equal(await put(a, '/rules/acme/orders', { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 }), 200);
    assert.equal(await put(b, '/limits/per-ip/overrides/tenant:acme', { policy: 'token_bucket', capacity: 9, refillPerSecond: 1 }), 200);
    const token = await fetch(`${a.adminUrl}/tokens`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ name: 'ci', role: 'read' }) });
    assert.equal(token.status, 201);
    await sql(url, "UPDATE rate_limit_rule SET shadow = true WHERE tenant_id = 'acme'"); // a psql edit counts too
    const after = await storeVersion();
    assert.equal(after, before + 4, 'one step per change: rule, override, token, hand edit');
    await until(async () => {
      const rows = await shown();
      return rows[idA]?.[0] === after && rows[idA]?.[1] === 0 && rows[idB]?.[0] === after && rows[idB]?.[1] === 0;
    }, `both instances show version ${after}, up to date`, 10_000, 50);
    for (const app of [a, b]) {
      const ready = (await (await fetch(`${app.adminUrl}/readyz`)).json()) as { rules: { version: number } };
      assert.equal(ready.rules.version, after, '/readyz says the version applied');
    }
    await browser.shot('version-01-in-step');
  });

  it('an instance whose change feed is cut shows as behind, then catches up', async () => {
    const [idA, idB] = [await idOf(a), await idOf(b)];
    const start = await storeVersion();
    await proxy.partition();
    for (let i = 0; i < 3; i++) assert.equal(await put(a, `/rules/t${i}/orders`, { policy: 'token_bucket', capacity: 5 + i, refillPerSecond: 1 }), 200);
    const newest = await storeVersion();
    assert.equal(newest, start + 3);
    await until(async () => {
      const rows = await shown();
      return rows[idA]?.[0] === newest && rows[idB]?.[0] === start && rows[idB]?.[1] === 3;
    }, `B shows version ${start}, behind by 3`, 10_000, 50);
    const cell = browser.page.locator(`#instances tbody tr[data-instance="${idB}"] [data-version]`);
    assert.equal(await cell.textContent(), `${start}, behind by 3`);
    assert.equal(await browser.page.locator(`#instances tbody tr[data-instance="${idB}"]`).getAttribute('class'), 'trouble-warn');
    await browser.shot('version-02-behind');
    await browser.page.locator('#instances').screenshot({ path: join(OUTPUT_DIR, 'version-02-behind-instances.png') });
    // The overview lists the stale rules, and its link leads to the instance table.
    await openView(browser.page, 'overview');
    const stale = browser.page.locator('#attention li', { hasText: `${idB} has stale rules: version ${start}, behind by 3` });
    await stale.waitFor({ timeout: 3000 });
    assert.equal(await browser.page.locator(`#sum-instances tbody tr[data-instance="${idB}"]`).getAttribute('class'), 'trouble-warn');
    await stale.getByRole('link', { name: 'See Instances' }).click();
    await browser.page.locator(`#instances tbody tr[data-instance="${idB}"]`).waitFor({ timeout: 3000 });
    await proxy.heal();
    await until(async () => {
      const rows = await shown();
      return rows[idB]?.[0] === newest && rows[idB]?.[1] === 0;
    }, `B catches up to ${newest}`, 30_000, 50);
  });
});
