// Two gateway instances on one PostgreSQL: what one admin API writes, the other's
// rule cache serves within a second; and a PostgreSQL outage during lookups.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AdminServer, startAdminServer } from '../../src/admin/server.js';
import { run as migrateCli } from '../../src/cli/migrate.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { silentLogger } from '../../src/rules/logger.js';
import { type RulesRuntime, startRules } from '../../src/rules/runtime.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { createDatabase, sql } from '../helpers/postgres-db.js';
import { eventually } from '../helpers/poll.js';

const TOKEN = 'propagation-token';
const defaultRule = { policy: 'token_bucket' as const, capacity: 20, refillPerSecond: 10 };

interface Instance {
  rules: RulesRuntime;
  admin: AdminServer;
  engine: StoreEngine;
  dir: string;
}

let server: PostgresServer;
let url: string;
let a: Instance;
let b: Instance;

async function startInstance(): Promise<Instance> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-instance-'));
  const rules = await startRules({ databaseUrl: url, dataDir: dir, defaultRule, logger: silentLogger });
  const engine = new StoreEngine(new MemoryStore());
  const admin = await startAdminServer({ listen: { port: 0 }, token: TOKEN, store: rules.store, cache: rules.cache, engine, logger: silentLogger });
  return { rules, admin, engine, dir };
}

async function stopInstance(i: Instance | undefined): Promise<void> {
  if (!i) return;
  await i.admin.close();
  await i.rules.close();
  await i.engine.close();
  rmSync(i.dir, { recursive: true, force: true });
}

// biome-ignore lint/suspicious/noExplicitAny: tests read response fields directly
async function call(i: Instance, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${i.admin.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

before(async () => {
  server = await startPostgres();
  url = await createDatabase(server);
  const lines: string[] = [];
  const code = await migrateCli([], { out: (t) => void lines.push(t), err: (t) => void lines.push(t), env: { SLUICE_DATABASE_URL: url } });
  assert.equal(code, 0, lines.join(''));
  assert.match(lines.join(''), /applied 001_rules_and_keys/);
  a = await startInstance();
  b = await startInstance();
});
after(async () => {
  await stopInstance(a);
  await stopInstance(b);
  await server?.stop();
});

describe('propagation between instances', () => {
  it('a rule PUT through one admin API is served by the other instance within 1 s', async () => {
    const rule = { policy: 'token_bucket', capacity: 200, refillPerSecond: 100 };
    const put = await call(a, 'PUT', '/rules/shop-a/create-order', rule);
    assert.equal(put.status, 200);
    const started = Date.now();
    await eventually(() => assert.deepEqual(b.rules.cache.resolve('shop-a', 'create-order').rule, rule), 1000);
    console.log(`rule propagated to the other instance in ${Date.now() - started} ms`);
    await call(a, 'PUT', '/rules/shop-a/create-order', { ...rule, capacity: 50 });
    await eventually(() => assert.deepEqual(b.rules.cache.resolve('shop-a', 'create-order').rule, { ...rule, capacity: 50 }), 1000);
    assert.equal((await call(a, 'DELETE', '/rules/shop-a/create-order')).status, 204);
    await eventually(() => assert.equal(b.rules.cache.resolve('shop-a', 'create-order').match, 'default'), 1000);
  });

  it('a key revoked through one instance stops resolving on the other within 1 s', async () => {
    const created = await call(a, 'POST', '/keys', { tenant: 'shop-a' });
    assert.equal(created.status, 201);
    await eventually(() => assert.equal(b.rules.cache.tenantFor(created.body.key), 'shop-a'), 1000);
    assert.equal((await call(a, 'DELETE', `/keys/${created.body.id}`)).status, 200);
    const started = Date.now();
    await eventually(() => assert.equal(b.rules.cache.tenantFor(created.body.key), undefined), 1000);
    console.log(`revocation propagated in ${Date.now() - started} ms`);
  });

  it('keeps answering from the last rules while PostgreSQL is down, and catches up after it returns', async () => {
    const rule = { policy: 'fixed_window' as const, limit: 7, windowMs: 1000 };
    await call(a, 'PUT', '/rules/shop-b/orders', rule);
    const key = (await call(a, 'POST', '/keys', { tenant: 'shop-b' })).body.key as string;
    await eventually(() => assert.equal(b.rules.cache.tenantFor(key), 'shop-b'), 1000);

    // Lookups run throughout the outage; every one must answer the loaded rule.
    let lookups = 0;
    let wrong = 0;
    let looping = true;
    const loop = (async () => {
      while (looping) {
        for (let i = 0; i < 1000; i++) {
          const resolved = b.rules.cache.resolve('shop-b', 'orders');
          if (resolved.rule.policy !== 'fixed_window' || b.rules.cache.tenantFor(key) !== 'shop-b') wrong++;
          lookups++;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();

    await server.kill();
    await eventually(() => assert.equal(b.rules.cache.status().storeReachable, false), 5000);
    const ready = await call(b, 'GET', '/readyz');
    assert.equal(ready.status, 200, 'the last loaded rules keep the instance ready');
    assert.equal(ready.body.rules.storeReachable, false);
    const listWhileDown = await call(b, 'GET', '/rules');
    assert.equal(listWhileDown.status, 503);
    assert.equal(listWhileDown.body.error.code, 'ERR_STORE_UNAVAILABLE');
    await b.rules.cache.refresh(); // a full reload attempt fails without disturbing lookups
    const duringOutage = lookups;

    await server.start();
    // A change made as soon as the server is back, possibly before the listener has reconnected.
    await sql(url, "UPDATE rate_limit_rule SET params = jsonb_set(params, '{limit}', '9') WHERE tenant_id = 'shop-b' AND route_id = 'orders'");
    await eventually(() => {
      const current = b.rules.cache.resolve('shop-b', 'orders').rule;
      assert.equal(current.policy === 'fixed_window' && current.limit, 9);
    }, 15_000);
    await eventually(() => assert.equal(b.rules.cache.status().storeReachable, true), 5000);
    looping = false;
    await loop;
    assert.ok(duringOutage > 0 && lookups > duringOutage, `lookups ran throughout (${lookups})`);
    assert.equal(wrong, 0);
    console.log(`${lookups} lookups during the outage test, none wrong`);

    // And the instance that wrote before the outage can write again.
    await eventually(async () => assert.equal((await call(a, 'PUT', '/rules/shop-b/orders', rule)).status, 200), 10_000);
    await eventually(() => assert.deepEqual(b.rules.cache.resolve('shop-b', 'orders').rule, rule), 1000);
  });
});
