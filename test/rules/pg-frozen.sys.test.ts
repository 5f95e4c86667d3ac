// PostgreSQL frozen (SIGSTOP on every process of the cluster): the admin API
// answers 503 within a few seconds, a write it reported as failed never lands,
// /readyz says the store is unreachable, and everything recovers on SIGCONT.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, afterEach, before, describe, it } from 'node:test';
import { type AdminServer, startAdminServer } from '../../src/admin/server.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { silentLogger } from '../../src/rules/logger.js';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { type RulesRuntime, startRules } from '../../src/rules/runtime.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { createDatabase, sql } from '../helpers/postgres-db.js';
import { eventually } from '../helpers/poll.js';

const TOKEN = 'frozen-postgres-token';
const TIMEOUT_MS = 1000;
const SKEW_MS = 300;
const defaultRule = { policy: 'token_bucket' as const, capacity: 20, refillPerSecond: 10 };
const rule = (capacity: number) => ({ policy: 'token_bucket', capacity, refillPerSecond: 1 });

let server: PostgresServer;
let url: string;
let dir: string;
let rules: RulesRuntime;
let admin: AdminServer;
let engine: StoreEngine;

// biome-ignore lint/suspicious/noExplicitAny: tests read response fields directly
async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${admin.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, ms: Date.now() - started };
}

function cachedCapacity(tenant: string, route: string): number | undefined {
  return (rules.cache.resolve(tenant, route).rule as { capacity?: number }).capacity;
}

async function storedCapacity(tenant: string, route: string): Promise<number | undefined> {
  const result = await sql(url, 'SELECT capacity FROM rate_limit_rule WHERE tenant_id = $1 AND route_id = $2', [tenant, route]);
  return result.rows[0]?.capacity;
}

before(async () => {
  server = await startPostgres();
  url = await createDatabase(server);
  dir = mkdtempSync(join(tmpdir(), 'sluice-frozen-'));
  rules = await startRules({
    databaseUrl: url,
    dataDir: dir,
    defaultRule,
    logger: silentLogger,
    timeouts: { statementTimeoutMs: TIMEOUT_MS, connectTimeoutMs: TIMEOUT_MS, maxClockSkewMs: SKEW_MS },
  });
  engine = new StoreEngine(new MemoryStore());
  admin = await startAdminServer({ listen: { port: 0 }, token: TOKEN, store: rules.store, cache: rules.cache, engine, logger: silentLogger, storeProbeTimeoutMs: TIMEOUT_MS });
});
afterEach(() => server.thaw());
after(async () => {
  server?.thaw();
  await admin?.close();
  await rules?.close();
  await engine?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('admin writes while PostgreSQL is frozen', () => {
  it('a PUT answers 503 within a few seconds, never lands after SIGCONT, and a later PUT lands', async () => {
    assert.equal((await call('PUT', '/rules/frozen-a/orders', rule(10))).status, 200);
    await eventually(() => assert.equal(cachedCapacity('frozen-a', 'orders'), 10), 2000);

    server.freeze();
    const failed = await call('PUT', '/rules/frozen-a/orders', rule(99));
    assert.equal(failed.status, 503);
    assert.equal(failed.body.error.code, 'ERR_STORE_UNAVAILABLE');
    assert.match(failed.body.error.message, /will not be applied/);
    assert.ok(failed.ms < 5000, `answered after ${failed.ms} ms`);
    server.thaw();

    // Give the resumed server time to run whatever it had received.
    await sleep(1500);
    assert.equal(await storedCapacity('frozen-a', 'orders'), 10);
    assert.equal(cachedCapacity('frozen-a', 'orders'), 10);

    const later = await call('PUT', '/rules/frozen-a/orders', rule(30));
    assert.equal(later.status, 200);
    await eventually(() => assert.equal(cachedCapacity('frozen-a', 'orders'), 30), 5000);
    assert.equal(await storedCapacity('frozen-a', 'orders'), 30);
  });

  it('an abandoned write never lands after a later acknowledged one', async () => {
    assert.equal((await call('PUT', '/rules/frozen-b/orders', rule(1))).status, 200);
    server.freeze();
    // Several writes pile up on the frozen server; each is told it failed.
    const abandoned = await Promise.all([2, 3, 4].map((capacity) => call('PUT', '/rules/frozen-b/orders', rule(capacity))));
    assert.deepEqual(
      abandoned.map((reply) => reply.status),
      [503, 503, 503],
    );
    server.thaw();
    const acknowledged = await call('PUT', '/rules/frozen-b/orders', rule(5));
    assert.equal(acknowledged.status, 200);
    await sleep(1500);
    assert.equal(await storedCapacity('frozen-b', 'orders'), 5);
    await eventually(() => assert.equal(cachedCapacity('frozen-b', 'orders'), 5), 5000);
  });

  it('a COMMIT the frozen server receives runs after the deadline and is refused', async () => {
    const client = new (await import('pg')).default.Client({ connectionString: url });
    await client.connect();
    try {
      const deadline = new Date(Date.now() + TIMEOUT_MS).toISOString();
      await client.query(`BEGIN; SET LOCAL sluice.write_deadline = '${deadline}'`);
      await client.query(`INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second, params, shadow)
        VALUES ('frozen-c', 'orders', 'token_bucket', 7, 1, '{}', false)`);
      server.freeze();
      const commit = client.query('COMMIT').then(
        () => 'committed',
        (error: { code?: string }) => error.code,
      );
      await sleep(TIMEOUT_MS + 500);
      server.thaw();
      assert.equal(await commit, 'SL001');
      assert.equal(await storedCapacity('frozen-c', 'orders'), undefined);
    } finally {
      await client.end();
    }
  });

  it('a write whose connection dies mid-statement is answered only once it can no longer commit', async () => {
    assert.equal((await call('PUT', '/rules/frozen-f/orders', rule(1))).status, 200);
    const locker = new (await import('pg')).default.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query("BEGIN; SELECT 1 FROM rate_limit_rule WHERE tenant_id = 'frozen-f' FOR UPDATE");
      const put = call('PUT', '/rules/frozen-f/orders', rule(2));
      let pid: number | undefined;
      await eventually(async () => {
        const blocked = await sql(url, "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'INSERT INTO rate_limit_rule%'");
        pid = blocked.rows[0]?.pid;
        assert.ok(pid);
      }, 3000);
      await sql(url, 'SELECT pg_terminate_backend($1)', [pid]);
      const reply = await put;
      assert.equal(reply.status, 503);
      // Not before the deadline (plus the skew margin) has passed: until then the write could still have committed.
      assert.ok(reply.ms >= TIMEOUT_MS + SKEW_MS - 20, `answered after ${reply.ms} ms`);
    } finally {
      await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
    assert.equal(await storedCapacity('frozen-f', 'orders'), 1);
  });

  it('reads time out with 503 too, and the cache keeps serving its last rules', async () => {
    assert.equal((await call('PUT', '/rules/frozen-d/orders', rule(12))).status, 200);
    await eventually(() => assert.equal(cachedCapacity('frozen-d', 'orders'), 12), 2000);
    server.freeze();
    const [list, one] = await Promise.all([call('GET', '/rules'), call('GET', '/rules/frozen-d/orders')]);
    assert.deepEqual([list.status, one.status], [503, 503]);
    assert.ok(Math.max(list.ms, one.ms) < 5000, `answered after ${list.ms} / ${one.ms} ms`);
    // The cache's own reload fails too (later); meanwhile it serves what it has.
    void rules.cache.refresh();
    await eventually(() => assert.equal(rules.cache.status().storeReachable, false), 5000);
    assert.equal(cachedCapacity('frozen-d', 'orders'), 12);
    server.thaw();
    await eventually(async () => assert.equal((await call('GET', '/rules/frozen-d/orders')).status, 200), 5000);
    await eventually(() => assert.equal(rules.cache.status().storeReachable, true), 10_000);
  });
});

describe('/readyz and change notifications while PostgreSQL is frozen', () => {
  it('/readyz reports the frozen store within ~3 s and recovers after SIGCONT', async () => {
    const healthy = await call('GET', '/readyz');
    assert.equal(healthy.body.store.reachable, true);
    server.freeze();
    const frozen = await call('GET', '/readyz');
    assert.ok(frozen.ms < 3500, `answered after ${frozen.ms} ms`);
    // Serving the last loaded rules is the fallback: still ready, but it says the store is out of reach.
    assert.equal(frozen.status, 200);
    assert.equal(frozen.body.store.reachable, false);
    assert.equal(frozen.body.rules.storeReachable, false);
    server.thaw();
    await eventually(async () => assert.equal((await call('GET', '/readyz')).body.store.reachable, true), 5000);
  });

  it('a connection the frozen server never accepts names database.connectTimeoutMs', async () => {
    // A fresh store must connect first; the frozen server's kernel accepts the TCP connection, PostgreSQL never answers it.
    const fresh = new PostgresRuleStore({ connectionString: url, statementTimeoutMs: 5000, connectTimeoutMs: 300, logger: silentLogger });
    server.freeze();
    try {
      await assert.rejects(fresh.listRules(), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'ERR_STORE_UNAVAILABLE');
        assert.match(error.message, /did not accept a connection within 300 ms \(database\.connectTimeoutMs\)/);
        return true;
      });
    } finally {
      server.thaw();
      await fresh.close();
    }
  });

  it('closing the rules runtime (store and cache) does not wait for a frozen server', async () => {
    const other = await startRules({ databaseUrl: url, dataDir: dir, defaultRule, logger: silentLogger, timeouts: { statementTimeoutMs: TIMEOUT_MS } });
    server.freeze();
    // A full reload is in flight, waiting on the frozen server.
    void other.cache.refresh();
    await sleep(20);
    const started = Date.now();
    const closed = other.close().then(() => Date.now() - started);
    const ms = await Promise.race([closed, sleep(5000).then(() => Number.POSITIVE_INFINITY)]);
    server.thaw();
    await closed;
    assert.ok(ms < 5000, `closed after ${ms} ms`);
  });

  it('the listener notices a freeze, reconnects after SIGCONT, and the cache catches up', async () => {
    // A change arriving proves the listener is connected (it may still be backing off from the last test).
    await sql(url, `INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second, params, shadow)
      VALUES ('frozen-e', 'orders', 'token_bucket', 43, 1, '{}', false)`);
    await eventually(() => assert.equal(cachedCapacity('frozen-e', 'orders'), 43), 10_000);
    assert.equal(rules.cache.status().storeReachable, true);
    server.freeze();
    // Nothing reads the store meanwhile: only the listener's heartbeat can notice.
    await eventually(() => assert.equal(rules.cache.status().storeReachable, false), 6000);
    server.thaw();
    await sql(url, "UPDATE rate_limit_rule SET capacity = 44 WHERE tenant_id = 'frozen-e'");
    await eventually(() => assert.equal(cachedCapacity('frozen-e', 'orders'), 44), 10_000);
    await eventually(() => assert.equal(rules.cache.status().storeReachable, true), 10_000);
  });
});
