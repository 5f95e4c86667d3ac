// The same checks of named tokens, roles and the audit log, run on the embedded
// store and on PostgreSQL (team-embedded.int.test.ts, team-postgres.int.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ReloadReport } from '../../src/admin/config-reload.js';
import type { RuleStore } from '../../src/rules/store.js';
import { startTeamAdmin, type TeamAdmin } from '../helpers/team-fixture.js';

const rule = { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 };

export function teamSuite(name: string, open: () => Promise<{ store: RuleStore; close: () => Promise<void> }>): void {
  describe(`tokens, roles and the audit log (${name})`, () => {
    let f: TeamAdmin;
    let opened: { store: RuleStore; close: () => Promise<void> };
    const tokens: Record<string, string> = {};
    before(async () => {
      opened = await open();
      const reports = [{ outcome: 'invalid', error: 'sluice.yaml:3: routes.0.path: required', field: 'routes.0.path' }, { outcome: 'applied', needsRestart: [], hash: 'h2' }];
      f = await startTeamAdmin(opened.store, async () => reports.shift() as unknown as ReloadReport);
      for (const role of ['read', 'write', 'admin']) {
        const created = await f.call('POST', '/tokens', { body: { name: `${role}-person`, role } });
        assert.equal(created.status, 201, JSON.stringify(created.body));
        tokens[role] = created.body.token;
      }
    });
    after(async () => {
      await f?.close();
      await opened?.close();
    });

    it('creates a token shown once, lists it without the token, and says who a token is', async () => {
      const listed = await f.call('GET', '/tokens');
      assert.deepEqual(listed.body.tokens.map((t: { name: string; role: string }) => `${t.name}:${t.role}`), ['admin-person:admin', 'read-person:read', 'write-person:write']);
      assert.ok(!JSON.stringify(listed.body).includes(tokens.read!));
      assert.deepEqual((await f.call('GET', '/whoami', { token: tokens.write })).body, { name: 'write-person', role: 'write' });
      assert.deepEqual((await f.call('GET', '/whoami')).body, { name: 'bootstrap', role: 'admin' });
      const taken = await f.call('POST', '/tokens', { body: { name: 'read-person', role: 'read' } });
      assert.equal(taken.status, 400);
      assert.equal(taken.body.error.field, 'name');
    });

    it('bad token input is a 400 naming the field', async () => {
      assert.equal((await f.call('POST', '/tokens', { body: { name: 'x', role: 'root' } })).body.error.field, 'body.role');
      assert.equal((await f.call('POST', '/tokens', { body: { name: 'a b', role: 'read' } })).body.error.field, 'body.name');
      assert.equal((await f.call('POST', '/tokens', { body: { name: 'bootstrap', role: 'read' } })).body.error.field, 'body.name');
    });

    it('a write token changes rules but not tokens; a read token reads', async () => {
      assert.equal((await f.call('PUT', '/rules/acme/orders', { body: rule, token: tokens.write })).status, 200);
      assert.equal((await f.call('GET', '/rules/acme/orders', { token: tokens.read })).status, 200);
      const refused = await f.call('POST', '/tokens', { body: { name: 'sneaky', role: 'admin' }, token: tokens.write });
      assert.equal(refused.status, 403);
      assert.equal(refused.body.error.code, 'ERR_FORBIDDEN');
      assert.equal((await f.call('GET', '/tokens', { token: tokens.write })).status, 403);
    });

    it('every write appears in the audit log with its author, address, before and after', async () => {
      await f.call('PUT', '/rules/audited/orders', { body: rule, token: tokens.write });
      await f.call('PUT', '/rules/audited/orders', { body: { ...rule, capacity: 9 }, token: tokens.admin });
      await f.call('PUT', '/limits/per-ip/overrides/ip:10.0.0.0%2F8', { body: rule, token: tokens.write });
      await f.call('DELETE', '/limits/per-ip/overrides/ip:10.0.0.0%2F8', { token: tokens.write });
      const key = await f.call('POST', '/keys', { body: { tenant: 'audited' }, token: tokens.write });
      await f.call('DELETE', `/keys/${key.body.id}`, { token: tokens.write });
      await f.call('DELETE', '/rules/audited/orders', { token: tokens.write });
      const { body } = await f.call('GET', '/audit?limit=7', { token: tokens.read });
      const entries = [...body.entries].reverse();
      assert.deepEqual(entries.map((e: { actor: string; action: string; outcome: string }) => `${e.actor} ${e.action} ${e.outcome}`), [
        'write-person PUT /rules/{tenant}/{route} ok',
        'admin-person PUT /rules/{tenant}/{route} ok',
        'write-person PUT /limits/{limitId}/overrides/{selector} ok',
        'write-person DELETE /limits/{limitId}/overrides/{selector} ok',
        'write-person POST /keys ok',
        'write-person DELETE /keys/{id} ok',
        'write-person DELETE /rules/{tenant}/{route} ok',
      ]);
      assert.equal(entries[0].before, null);
      assert.equal(entries[1].before.rule.capacity, 5);
      assert.equal(entries[1].after.rule.capacity, 9);
      assert.equal(entries[2].target, 'per-ip ip:10.0.0.0/8');
      assert.equal(entries[4].target, key.body.id);
      assert.ok(!JSON.stringify(body).includes(key.body.key), 'the clear key is never in the log');
      assert.equal(entries[6].after, null);
      assert.ok(entries.every((e: { address: string }) => e.address === '127.0.0.1' || e.address === '::ffff:127.0.0.1'));
    });

    it('a failed or refused write is logged as failed, with its error', async () => {
      await f.call('PUT', '/rules/failing/orders', { body: { policy: 'token_bucket', capacity: -1, refillPerSecond: 1 }, token: tokens.write });
      await f.call('DELETE', '/rules/failing/orders', { token: tokens.read });
      const { body } = await f.call('GET', '/audit?limit=2&kind=rule');
      const [refused, invalid] = body.entries;
      assert.equal(invalid.outcome, 'failed');
      assert.equal(invalid.actor, 'write-person');
      assert.match(invalid.error, /^ERR_/);
      assert.equal(refused.outcome, 'failed');
      assert.equal(refused.actor, 'read-person');
      assert.match(refused.error, /ERR_FORBIDDEN/);
    });

    it('a reload is audited: refused for a write token, failed for an invalid file, then applied', async () => {
      assert.equal((await f.call('POST', '/reload', { token: tokens.write })).status, 403);
      assert.equal((await f.call('POST', '/reload', { token: tokens.admin })).status, 400);
      assert.equal((await f.call('POST', '/reload', { token: tokens.admin })).status, 200);
      const { entries } = (await f.call('GET', '/audit?kind=reload')).body;
      assert.deepEqual(entries.map((e: { actor: string; outcome: string }) => `${e.actor} ${e.outcome}`), ['admin-person ok', 'admin-person failed', 'write-person failed']);
      assert.match(entries[1].error, /ERR_CONFIG_INVALID: sluice\.yaml:3/);
      assert.equal(entries[0].after.hash, 'h2');
    });

    it('filters by actor, kind and time, and pages with a cursor', async () => {
      const byRead = await f.call('GET', '/audit?actor=read-person');
      assert.ok(byRead.body.entries.length > 0 && byRead.body.entries.every((e: { actor: string }) => e.actor === 'read-person'));
      const tokensOnly = await f.call('GET', '/audit?kind=token');
      assert.equal(tokensOnly.body.entries.filter((e: { outcome: string }) => e.outcome === 'ok').length, 3);
      assert.equal((await f.call('GET', '/audit?since=2999-01-01T00:00:00Z')).body.entries.length, 0);
      const all = (await f.call('GET', '/audit?limit=1000')).body.entries.map((e: { id: number }) => e.id);
      const paged: number[] = [];
      let cursor = '';
      for (;;) {
        const page = await f.call('GET', `/audit?limit=4${cursor}`);
        paged.push(...page.body.entries.map((e: { id: number }) => e.id));
        if (!page.body.next) break;
        cursor = `&cursor=${page.body.next}`;
      }
      assert.deepEqual(paged, all);
      assert.equal((await f.call('GET', '/audit?limit=0')).body.error.field, 'limit');
      assert.equal((await f.call('GET', '/audit?kind=nope')).body.error.field, 'kind');
      assert.equal((await f.call('GET', '/audit?since=yesterday')).body.error.field, 'since');
    });

    it('a revoked token is refused at once, and its revocation is audited', async () => {
      const made = await f.call('POST', '/tokens', { body: { name: 'short-lived', role: 'read' } });
      assert.equal((await f.call('GET', '/rules', { token: made.body.token })).status, 200);
      assert.equal((await f.call('DELETE', '/tokens/short-lived')).status, 204);
      assert.equal((await f.call('GET', '/rules', { token: made.body.token })).status, 401);
      const [entry] = (await f.call('GET', '/audit?kind=token&limit=1')).body.entries;
      assert.equal(entry.action, 'DELETE /tokens/{name}');
      assert.equal(entry.before.name, 'short-lived');
      assert.equal((await f.call('DELETE', '/tokens/bootstrap')).status, 400);
    });
  });
}

/** SLUICE_AUDIT_KEEP_* set while `open` makes the store (the store reads them when it opens). */
export async function withRetention<T>(env: Record<string, string>, open: () => Promise<T>): Promise<T> {
  Object.assign(process.env, env);
  try {
    return await open();
  } finally {
    for (const name of Object.keys(env)) delete process.env[name];
  }
}

/** Changes, then a flood of a `read` token's refused writes: every change stays, the failed attempts keep to their own cap. Caps: 50 changes, 5 failed. */
export async function floodRefusedWrites(store: RuleStore): Promise<void> {
  const f = await startTeamAdmin(store);
  try {
    const reader = (await f.call('POST', '/tokens', { body: { name: 'flooder', role: 'read' } })).body.token;
    for (let i = 0; i < 10; i++) assert.equal((await f.call('PUT', `/rules/kept/r${i}`, { body: rule })).status, 200);
    for (let i = 0; i < 120; i++) assert.equal((await f.call('PUT', `/rules/flood/r${i}`, { body: rule, token: reader })).status, 403);
    const { entries } = (await f.call('GET', '/audit?limit=1000')).body;
    const changes = entries.filter((e: { outcome: string; kind: string }) => e.outcome === 'ok' && e.kind === 'rule').map((e: { target: string }) => e.target);
    assert.deepEqual(changes.reverse(), Array.from({ length: 10 }, (_, i) => `kept/r${i}`), 'no change was pushed out');
    const failed = entries.filter((e: { outcome: string }) => e.outcome === 'failed');
    assert.deepEqual(failed.map((e: { target: string }) => e.target), ['flood/r119', 'flood/r118', 'flood/r117', 'flood/r116', 'flood/r115']);
  } finally {
    await f.close();
  }
}
