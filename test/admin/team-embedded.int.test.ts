// Tokens, roles and the audit log on the embedded store, and its bounds.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { startTeamAdmin } from '../helpers/team-fixture.js';
import { floodRefusedWrites, teamSuite, withRetention } from './team-suite.js';

teamSuite('embedded store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-team-'));
  const store = new EmbeddedRuleStore({ dataDir: dir });
  return {
    store,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('the embedded audit log is bounded', () => {
  const entry = { actor: 'bootstrap', address: '127.0.0.1', kind: 'rule' as const, action: 'PUT /rules/{tenant}/{route}', before: null, after: null, outcome: 'ok' as const };

  it('keeps at most SLUICE_AUDIT_KEEP_ENTRIES entries, and none older than SLUICE_AUDIT_KEEP_DAYS', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-team-'));
    Object.assign(process.env, { SLUICE_AUDIT_KEEP_DAYS: '1', SLUICE_AUDIT_KEEP_ENTRIES: '3' });
    let store: EmbeddedRuleStore;
    try {
      store = new EmbeddedRuleStore({ dataDir: dir });
    } finally {
      delete process.env.SLUICE_AUDIT_KEEP_DAYS;
      delete process.env.SLUICE_AUDIT_KEEP_ENTRIES;
    }
    try {
      await store.team.appendAudit({ ...entry, target: 'old/one' });
      const db = new Database(join(dir, 'rules.sqlite'));
      db.prepare('UPDATE audit_log SET at = ?').run(new Date(Date.now() - 2 * 86_400_000).toISOString());
      db.close();
      for (const target of ['a/1', 'b/2', 'c/3', 'd/4']) await store.team.appendAudit({ ...entry, target });
      assert.deepEqual((await store.team.listAudit({ limit: 100 })).map((e) => e.target), ['d/4', 'c/3', 'b/2']);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refused writes keep to their own cap (SLUICE_AUDIT_KEEP_FAILED): a flood never pushes a change out', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-team-'));
    const store = await withRetention({ SLUICE_AUDIT_KEEP_ENTRIES: '50', SLUICE_AUDIT_KEEP_FAILED: '5' }, async () => new EmbeddedRuleStore({ dataDir: dir }));
    try {
      await floodRefusedWrites(store);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an audit entry the store refuses rolls the change back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-team-'));
    const store = new EmbeddedRuleStore({ dataDir: dir });
    const f = await startTeamAdmin(store);
    try {
      const db = new Database(join(dir, 'rules.sqlite'));
      db.exec("CREATE TRIGGER refuse_entries BEFORE INSERT ON audit_log BEGIN SELECT RAISE(ABORT, 'no more entries'); END");
      const put = await f.call('PUT', '/rules/atomic/orders', { body: { policy: 'gcra', capacity: 2, refillPerSecond: 1 } });
      assert.equal(put.status, 503, JSON.stringify(put.body));
      assert.match(put.body.error.message, /no more entries.*rolled back/);
      assert.equal(await store.getRule('atomic', 'orders'), undefined, 'the change is not there without its entry');
      db.exec('DROP TRIGGER refuse_entries');
      db.close();
      assert.equal((await f.call('PUT', '/rules/atomic/orders', { body: { policy: 'gcra', capacity: 2, refillPerSecond: 1 } })).status, 200);
      assert.equal((await store.team.listAudit({ limit: 10 })).filter((e) => e.target === 'atomic/orders' && e.outcome === 'ok').length, 1);
    } finally {
      await f.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a bad SLUICE_AUDIT_KEEP_DAYS is refused by name, and the data dir is left unlocked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-team-'));
    process.env.SLUICE_AUDIT_KEEP_DAYS = 'forever';
    try {
      assert.throws(() => new EmbeddedRuleStore({ dataDir: dir }), (error: Error & { code?: string }) => error.code === 'ERR_CONFIG_INVALID' && /SLUICE_AUDIT_KEEP_DAYS/.test(error.message));
    } finally {
      delete process.env.SLUICE_AUDIT_KEEP_DAYS;
    }
    await new EmbeddedRuleStore({ dataDir: dir }).close();
    rmSync(dir, { recursive: true, force: true });
  });
});
