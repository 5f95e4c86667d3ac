// Tokens, roles and the audit log on PostgreSQL (the run's shared server, or a private one),
// and a token revoked on one instance refused by another sharing the
// database within the token cache's time (polled, never timed).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { silentLogger } from '../../src/rules/logger.js';
import { createDatabase, sql } from '../helpers/postgres-db.js';
import { type PostgresHost, postgresForFile } from '../helpers/shared-servers.js';
import { eventually } from '../helpers/poll.js';
import { startTeamAdmin } from '../helpers/team-fixture.js';
import { floodRefusedWrites, teamSuite, withRetention } from './team-suite.js';

let server: PostgresHost;
before(async () => {
  server = await postgresForFile();
});
after(async () => {
  await server?.stop();
});

const openStore = async (url: string) => {
  const store = new PostgresRuleStore({ connectionString: url, logger: silentLogger });
  return { store, close: () => store.close() };
};

teamSuite('PostgreSQL', async () => openStore(await createDatabase(server)));

describe('tokens across instances sharing PostgreSQL', () => {
  it('a token made on A works on B; revoked on A, B refuses it within a second', async () => {
    const url = await createDatabase(server);
    const [storeA, storeB] = [await openStore(url), await openStore(url)];
    const [a, b] = [await startTeamAdmin(storeA.store), await startTeamAdmin(storeB.store)];
    try {
      const made = await a.call('POST', '/tokens', { body: { name: 'on-call', role: 'write' } });
      assert.equal((await b.call('PUT', '/rules/t1/r1', { body: { policy: 'gcra', capacity: 2, refillPerSecond: 1 }, token: made.body.token })).status, 200);
      assert.equal((await a.call('DELETE', '/tokens/on-call')).status, 204);
      await eventually(async () => assert.equal((await b.call('GET', '/rules', { token: made.body.token })).status, 401), 1000);
      const entries = (await a.call('GET', '/audit')).body.entries;
      assert.ok(entries.some((e: { actor: string; action: string }) => e.actor === 'on-call' && e.action === 'PUT /rules/{tenant}/{route}'), 'B wrote its entry to the shared log');
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([storeA.close(), storeB.close()]);
    }
  });
});

describe('the audit log is bounded', () => {
  it('keeps at most SLUICE_AUDIT_KEEP_ENTRIES entries, and none older than SLUICE_AUDIT_KEEP_DAYS', async () => {
    const url = await createDatabase(server);
    Object.assign(process.env, { SLUICE_AUDIT_KEEP_DAYS: '1', SLUICE_AUDIT_KEEP_ENTRIES: '3' });
    const opened = await openStore(url).finally(() => {
      delete process.env.SLUICE_AUDIT_KEEP_DAYS;
      delete process.env.SLUICE_AUDIT_KEEP_ENTRIES;
    });
    try {
      const entry = { actor: 'bootstrap', address: '127.0.0.1', kind: 'rule' as const, action: 'PUT /rules/{tenant}/{route}', before: null, after: null, outcome: 'ok' as const };
      await opened.store.team.appendAudit({ ...entry, target: 'old/one' });
      await sql(url, "UPDATE audit_log SET at = now() - interval '2 days'");
      for (const target of ['a/1', 'b/2', 'c/3', 'd/4']) await opened.store.team.appendAudit({ ...entry, target });
      const kept = await opened.store.team.listAudit({ limit: 100 });
      assert.deepEqual(kept.map((e) => e.target), ['d/4', 'c/3', 'b/2']);
    } finally {
      await opened.close();
    }
  });
});

describe('refused writes keep to their own cap (PostgreSQL)', () => {
  it('a flood of a read token\'s refused writes never pushes a change out', async () => {
    const url = await createDatabase(server);
    const opened = await withRetention({ SLUICE_AUDIT_KEEP_ENTRIES: '50', SLUICE_AUDIT_KEEP_FAILED: '5' }, () => openStore(url));
    try {
      await floodRefusedWrites(opened.store);
    } finally {
      await opened.close();
    }
  });
});

describe('an audited change and its entry commit together (PostgreSQL)', () => {
  const rule = { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 };
  const count = async (url: string, table: string, where: string): Promise<number> => (await sql(url, `SELECT count(*)::int AS n FROM ${table} WHERE ${where}`)).rows[0].n;

  it('an audit entry the store refuses rolls the change back', async () => {
    const url = await createDatabase(server);
    const opened = await openStore(url);
    const f = await startTeamAdmin(opened.store);
    try {
      // NOT VALID: the rows there stay, every new one is refused.
      await sql(url, 'ALTER TABLE audit_log ADD CONSTRAINT refuse_entries CHECK (false) NOT VALID');
      const put = await f.call('PUT', '/rules/atomic/orders', { body: rule });
      assert.equal(put.status, 503, JSON.stringify(put.body));
      assert.match(put.body.error.message, /refused the audit entry of this change .* rolled back/);
      assert.equal(await count(url, 'rate_limit_rule', "tenant_id = 'atomic'"), 0, 'the change is not there without its entry');
      await sql(url, 'ALTER TABLE audit_log DROP CONSTRAINT refuse_entries');
      assert.equal((await f.call('PUT', '/rules/atomic/orders', { body: rule })).status, 200);
      assert.equal(await count(url, 'rate_limit_rule', "tenant_id = 'atomic'"), 1);
      assert.equal(await count(url, 'audit_log', "target = 'atomic/orders' AND outcome = 'ok'"), 1);
    } finally {
      await f.close();
      await opened.close();
    }
  });
});
