// An audited admin write on a frozen PostgreSQL (SIGSTOP on every process of
// this test's own cluster): one deadline bounds the whole call (the read of
// the state before, the write and its audit entry), and after SIGCONT neither
// the change nor its entry has landed.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { silentLogger } from '../../src/rules/logger.js';
import { createDatabase, sql } from '../helpers/postgres-db.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { startTeamAdmin } from '../helpers/team-fixture.js';

let server: PostgresServer;
before(async () => {
  server = await startPostgres();
});
after(async () => {
  await server?.stop();
});

describe('an audited change on a frozen PostgreSQL', () => {
  const rule = { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 };
  const count = async (url: string, table: string, where: string): Promise<number> => (await sql(url, `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0].n;

  it('frozen: a PUT is answered 503 within statementTimeoutMs + maxClockSkewMs, and after SIGCONT neither the change nor its entry is there', async () => {
    const url = await createDatabase(server);
    const [timeoutMs, skewMs] = [1500, 300];
    const store = new PostgresRuleStore({ connectionString: url, logger: silentLogger, statementTimeoutMs: timeoutMs, maxClockSkewMs: skewMs, connectTimeoutMs: timeoutMs });
    const f = await startTeamAdmin(store);
    try {
      assert.equal((await f.call('PUT', '/rules/frozen/orders', { body: rule })).status, 200);
      server.freeze();
      const started = Date.now();
      const put = await f.call('PUT', '/rules/frozen/orders', { body: { ...rule, capacity: 99 } });
      const ms = Date.now() - started;
      assert.equal(put.status, 503, JSON.stringify(put.body));
      assert.equal(put.body.error.code, 'ERR_STORE_UNAVAILABLE');
      // The bound is 1800 ms; before one deadline covered the call, the read before, the write and the entry took one each (5100 ms).
      assert.ok(ms < timeoutMs + skewMs + 1700, `answered after ${ms} ms`);
    } finally {
      server.thaw();
    }
    try {
      // The resumed server runs whatever it had received.
      await sleep(2000);
      const capacity = (await sql(url, "SELECT capacity FROM rate_limit_rule WHERE tenant_id = 'frozen'")).rows[0].capacity;
      const changes = await count(url, 'audit_log', "target = 'frozen/orders' AND outcome = 'ok' AND after->'rule'->>'capacity' = '99'");
      assert.deepEqual({ capacity, changes }, { capacity: 5, changes: 0 });
      // A later write lands, with its entry.
      assert.equal((await f.call('PUT', '/rules/frozen/orders', { body: { ...rule, capacity: 7 } })).status, 200);
      assert.equal(await count(url, 'audit_log', "target = 'frozen/orders' AND outcome = 'ok' AND after->'rule'->>'capacity' = '7'"), 1);
    } finally {
      await f.close();
      await store.close();
    }
  });
});
