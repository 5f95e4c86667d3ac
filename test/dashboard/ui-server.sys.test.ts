// The /ui routes of the admin listener: static files open, the data endpoint
// behind the token, a strict CSP on every answer (errors included), nothing
// outside the page's own files served.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { type AdminServer, startAdminServer } from '../../src/admin/server.js';
import { Dashboard } from '../../src/dashboard/dashboard.js';
import { EngineObserver } from '../../src/dashboard/engine-observer.js';
import { CONTENT_SECURITY_POLICY } from '../../src/dashboard/ui-routes.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { silentLogger } from '../../src/rules/logger.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { startRedis } from '../helpers/redis-server.js';

const TOKEN = 'ui-admin-token-0123456789';

describe('the /ui routes', () => {
  let admin: AdminServer;
  let store: EmbeddedRuleStore;
  let cache: RuleCache;
  let engine: StoreEngine;
  let observer: EngineObserver;
  let dashboard: Dashboard;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-ui-'));
    store = new EmbeddedRuleStore({ dataDir: dir });
    cache = new RuleCache({ store, defaultRule: { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 }, logger: silentLogger });
    await cache.start();
    engine = new StoreEngine(new MemoryStore());
    observer = new EngineObserver(engine);
    dashboard = new Dashboard({ observer, logger: pino({ level: 'silent' }) });
    admin = await startAdminServer({ listen: { port: 0 }, token: TOKEN, store, cache, engine, dashboard, logger: silentLogger });
  });
  after(async () => {
    await admin.close();
    await Promise.all([cache.close(), engine.close(), dashboard.close()]);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (path: string, token?: string) => fetch(`${admin.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('serves the page, its scripts and uPlot without a token, each with the strict CSP', async () => {
    for (const [path, type] of [
      ['/ui', 'text/html'],
      ['/ui/', 'text/html'],
      ['/ui/app.js', 'text/javascript'],
      ['/ui/nav.js', 'text/javascript'],
      ['/ui/summary.js', 'text/javascript'],
      ['/ui/app.css', 'text/css'],
      ['/ui/vendor/uPlot.iife.min.js', 'text/javascript'],
      ['/ui/vendor/uPlot.min.css', 'text/css'],
    ] as const) {
      const res = await get(path);
      assert.equal(res.status, 200, path);
      assert.ok(res.headers.get('content-type')?.startsWith(type), path);
      assert.equal(res.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, path);
      await res.arrayBuffer();
    }
    assert.match(CONTENT_SECURITY_POLICY, /default-src 'self'/);
    assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
    assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
  });

  it('the page has no inline script or style for the CSP to block', async () => {
    const html = await (await get('/ui/')).text();
    assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, 'every script has a src');
    assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i);
  });

  it('the data endpoint needs the bearer token; refusals carry the CSP too', async () => {
    const none = await get('/ui/api/overview');
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY);
    assert.equal((await none.json()).error.field, 'authorization');
    assert.equal((await get('/ui/api/overview', 'wrong-token')).status, 401);
    const ok = await get('/ui/api/overview', TOKEN);
    assert.equal(ok.status, 200);
    const body = await ok.json();
    assert.equal(body.scope, 'local');
    assert.equal(body.instances.length, 1);
    assert.equal(body.instances[0].mode, 'memory');
  });

  it('the history endpoint: the token, a range by name (400 naming `range` otherwise), this instance only with the memory store', async () => {
    assert.equal((await get('/ui/api/history?range=1h')).status, 401);
    const bad = await get('/ui/api/history?range=1y', TOKEN);
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /range: must be one of 5m, 1h, 1d/);
    dashboard.history.request('orders', 0, 200, 3, 0.2);
    dashboard.history.request('orders', 1, 429, 1, 0.2);
    const reply = await get('/ui/api/history?range=5m', TOKEN);
    assert.equal(reply.status, 200);
    const view = (await reply.json()) as { scope: string; stepSeconds: number; starts: number[]; routes: Record<string, { totals: Record<string, number> }> };
    assert.equal(view.scope, 'local');
    assert.deepEqual([view.stepSeconds, view.starts.length], [10, 30]);
    assert.deepEqual([view.routes.orders!.totals.allowed, view.routes.orders!.totals.refused, view.routes.orders!.totals.s429], [1, 1, 1]);
    const day = (await (await get('/ui/api/history?range=1d', TOKEN)).json()) as { stepSeconds: number; starts: number[] };
    assert.deepEqual([day.stepSeconds, day.starts.length], [60, 1440]);
  });

  it('serves nothing else: unknown files and escapes are 404, writes are 405', async () => {
    for (const path of ['/ui/%2e%2e/package.json', '/ui/..%2fpackage.json', '/ui/vendor/..%2f..%2fpackage.json']) {
      const res = await get(path);
      assert.notEqual(res.status, 200, path);
      assert.doesNotMatch(await res.text(), /"name": "sluice"/, path);
    }
    // An Object.prototype name is no file either (it once reached readFileSync as a function: a 500).
    for (const path of ['/ui/..%2fpackage.json', '/ui/vendor/uPlot.cjs.js', '/ui/nope.js', '/ui/constructor', '/ui/__proto__', '/ui/toString']) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, path);
      await res.arrayBuffer();
    }
    const post = await fetch(`${admin.url}/ui/api/overview`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(post.status, 405);
  });

  it('closes within seconds while a page keeps polling on a keep-alive connection, a poll in flight', async () => {
    // A frozen Redis makes each overview wait about a second: close() lands while one is answered.
    const redis = await startRedis();
    const deadRedis = new Dashboard({ observer, redis: { url: redis.url }, logger: pino({ level: 'silent' }) });
    await sleep(200);
    redis.pause();
    const server = await startAdminServer({ listen: { port: 0 }, token: TOKEN, store, cache, engine, dashboard: deadRedis, logger: silentLogger });
    const agent = new Agent({ keepAliveTimeout: 30_000, connections: 1 });
    let polling = true;
    let answered = 0;
    const poll = (async () => {
      while (polling) {
        const res = await request(`${server.url}/ui/api/overview`, { headers: { authorization: `Bearer ${TOKEN}` }, dispatcher: agent }).catch(() => undefined);
        if (res?.statusCode === 200) answered++;
        await res?.body.dump();
        await sleep(100);
      }
    })();
    while (answered === 0) await sleep(50);
    await sleep(300); // the next poll is in flight now
    const closed = await Promise.race([server.close().then(() => true), sleep(8_000).then(() => false)]);
    polling = false;
    await poll;
    await Promise.all([agent.close(), deadRedis.close()]);
    await redis.stop();
    assert.equal(closed, true, 'the admin listener closed although the client kept its connection busy');
  });
});
