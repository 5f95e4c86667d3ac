import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadMigrations, migrate } from '../../src/rules/postgres/migrations.js';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import type { StoreChange } from '../../src/rules/store.js';
import { type PostgresHost, postgresForFile } from '../helpers/shared-servers.js';
import { createDatabase, sql } from '../helpers/postgres-db.js';
import { recordingLogger, type StoreFactory, storeContract } from './store-contract.js';
import { eventually } from '../helpers/poll.js';
import { overrideContract } from './override-contract.js';

let server: PostgresHost;
before(async () => {
  server = await postgresForFile();
});
after(async () => {
  await server?.stop();
});

const factory: StoreFactory = {
  location: () => createDatabase(server),
  open: (connectionString, options) => new PostgresRuleStore({ connectionString, ...options }),
  sql: async (url, text) => {
    await sql(url, text);
  },
};

storeContract('postgres', factory);
overrideContract('postgres', factory);

describe('postgres store', () => {
  const bucket = { policy: 'token_bucket' as const, capacity: 5, refillPerSecond: 1 };

  it('applies migrations once, in order, and records them', async () => {
    const url = await createDatabase(server);
    const pgClient = (await import('pg')).default;
    const client = new pgClient.Client({ connectionString: url });
    await client.connect();
    try {
      const first = await migrate(client);
      assert.deepEqual(first.map((m) => m.version), loadMigrations().map((m) => m.version));
      assert.deepEqual(await migrate(client), [], 'a second run applies nothing');
      const rows = (await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version);
      assert.deepEqual(rows, first.map((m) => m.version));
    } finally {
      await client.end();
    }
  });

  it('announces rows edited with plain SQL', async () => {
    const url = await createDatabase(server);
    const store = new PostgresRuleStore({ connectionString: url });
    try {
      await store.listRules(); // migrates
      const seen: StoreChange[] = [];
      await store.watch((change) => seen.push(change));
      await sql(url, "INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second) VALUES ('shop-a', 'psql', 'token_bucket', 3, 1)");
      await eventually(() => assert.ok(seen.some((c) => c.kind === 'rule' && c.route === 'psql')));
    } finally {
      await store.close();
    }
  });

  it('announces override rows edited with plain SQL, and a truncate as a reload', async () => {
    const url = await createDatabase(server);
    const store = new PostgresRuleStore({ connectionString: url });
    try {
      await store.listRules(); // migrates
      const seen: StoreChange[] = [];
      await store.watch((change) => seen.push(change));
      await sql(url, "INSERT INTO limit_override (limit_id, selector, policy, params) VALUES ('login-per-ip', 'ip:10.0.0.0/8', 'fixed_window', '{\"limit\": 9, \"windowMs\": 1000}')");
      await eventually(() => assert.ok(seen.some((c) => c.kind === 'override' && c.limitId === 'login-per-ip' && c.selector === 'ip:10.0.0.0/8'), 'insert announced'));
      await sql(url, 'TRUNCATE limit_override');
      await eventually(() => assert.ok(seen.some((c) => c.kind === 'reload'), 'truncate announced'));
    } finally {
      await store.close();
    }
  });

  it('a psql row with an invalid or non-canonical selector is never served and is not taken for an outage', async () => {
    const url = await createDatabase(server);
    const store = new PostgresRuleStore({ connectionString: url });
    const logger = recordingLogger();
    const cache = new RuleCache({ store, defaultRule: { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 }, logger });
    try {
      await cache.start();
      const insert = (selector: string) =>
        sql(url, `INSERT INTO limit_override (limit_id, selector, policy, capacity, refill_per_second) VALUES ('login-per-ip', '${selector}', 'gcra', 5, 1)`);
      await insert('ip:10.1.2.3/8'); // host bits set
      await insert('ip:10.0.0.1/32'); // canonical is ip:10.0.0.1
      await insert('ip:192.0.2.0/24');
      await eventually(() => assert.equal(cache.status().overrides, 1, 'only the valid row'), 5000);
      assert.deepEqual([...cache.overrides().stored.values()].map((o) => o.selector), ['ip:192.0.2.0/24']);
      assert.equal(cache.status().storeReachable, true);
      assert.ok(!logger.lines.some((line) => line.includes('unreachable')), logger.lines.join('\n'));
      await cache.refresh();
      assert.equal(cache.status().overrides, 1, 'a full load agrees with the change batches');
    } finally {
      await cache.close();
      await store.close();
    }
  });

  it('refuses to commit an override write past its deadline (migration 003 pattern)', async () => {
    const url = await createDatabase(server);
    const store = new PostgresRuleStore({ connectionString: url });
    await store.listRules(); // migrates
    await store.close();
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(`BEGIN; SET LOCAL sluice.write_deadline = '${new Date(Date.now() - 1000).toISOString()}'`);
      await client.query("INSERT INTO limit_override (limit_id, selector, policy, capacity, refill_per_second) VALUES ('l', 'tenant:a', 'gcra', 1, 1)");
      await assert.rejects(client.query('COMMIT'), (error: { code?: string }) => error.code === 'SL001');
      assert.deepEqual((await client.query('SELECT count(*)::int AS n FROM limit_override')).rows, [{ n: 0 }]);
    } finally {
      await client.end();
    }
  });

  it('seeds the config rules once even with two instances starting together', async () => {
    const url = await createDatabase(server);
    const seedRules = [{ tenant: 'shop-a', route: 'orders', rule: bucket }];
    const a = new PostgresRuleStore({ connectionString: url, seedRules });
    const b = new PostgresRuleStore({ connectionString: url, seedRules });
    await Promise.all([a.listRules(), b.listRules()]);
    assert.equal((await a.listRules()).length, 1);
    await a.deleteRule('shop-a', 'orders');
    await Promise.all([a.close(), b.close()]);
    const c = new PostgresRuleStore({ connectionString: url, seedRules });
    assert.deepEqual(await c.listRules(), []);
    await c.close();
  });

  it('reports an unreachable database as ERR_STORE_UNAVAILABLE without the password', async () => {
    const store = new PostgresRuleStore({ connectionString: 'postgres://sluice:s3cret@127.0.0.1:1/sluice' });
    await assert.rejects(store.listRules(), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'ERR_STORE_UNAVAILABLE');
      assert.match(error.message, /127\.0\.0\.1:1/);
      assert.equal(error.message.includes('s3cret'), false);
      return true;
    });
    await store.close();
  });
});
