// The same checks of plans, run on the embedded store and on PostgreSQL
// (plans-embedded.int.test.ts, plans-postgres.int.test.ts): CRUD through the
// admin API with its 400s, 404s and 409s, roles, audit entries, precedence
// (own rule > plan > default; a key's plan > its tenant's), and a change
// reaching a second rule cache within the propagation bound (1 s) without
// rewriting a row per tenant.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/rules/logger.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import type { RuleStore } from '../../src/rules/store.js';
import { eventually } from '../helpers/poll.js';
import { startTeamAdmin, type TeamAdmin } from '../helpers/team-fixture.js';

const free = { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 };
const pro = { policy: 'token_bucket', capacity: 50, refillPerSecond: 10 };
const defaultRule = { policy: 'token_bucket' as const, capacity: 20, refillPerSecond: 10 };

export interface PlansStores {
  store: RuleStore;
  /** Another instance's store on the same data (PostgreSQL), or the same store (embedded: one process). */
  peer: RuleStore;
  close(): Promise<void>;
}

export function plansSuite(name: string, open: () => Promise<PlansStores>): void {
  describe(`plans (${name})`, () => {
    let f: TeamAdmin;
    let stores: PlansStores;
    let peer: RuleCache;
    before(async () => {
      stores = await open();
      f = await startTeamAdmin(stores.store);
      peer = new RuleCache({ store: stores.peer, defaultRule, logger: silentLogger });
      await peer.start();
    });
    after(async () => {
      await peer?.close();
      await f?.close();
      await stores?.close();
    });

    it('creates, lists, shows and deletes plans and their limits', async () => {
      const created = await f.call('POST', '/plans', { body: { name: 'free' } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual({ ...created.body, createdAt: undefined }, { name: 'free', createdAt: undefined, limits: [] });
      assert.equal((await f.call('PUT', '/plans/free/limits/global', { body: free })).status, 200);
      const byRoute = await f.call('PUT', '/plans/free/limits/route/orders', { body: { policy: 'fixed_window', limit: 3, windowMs: 1000 } });
      assert.equal(byRoute.status, 200, JSON.stringify(byRoute.body));
      assert.deepEqual([byRoute.body.plan, byRoute.body.scope, byRoute.body.target], ['free', 'route', 'orders']);
      assert.equal((await f.call('PUT', '/plans/free/limits/limit/per-ip', { body: free })).status, 200);
      const shown = await f.call('GET', '/plans/free');
      assert.deepEqual(shown.body.limits.map((l: { scope: string; target: string }) => `${l.scope}:${l.target}`), ['global:*', 'limit:per-ip', 'route:orders']);
      assert.deepEqual((await f.call('GET', '/plans')).body.plans.map((p: { name: string }) => p.name), ['free']);
      assert.equal((await f.call('DELETE', '/plans/free/limits/limit/per-ip')).status, 204);
      assert.equal((await f.call('DELETE', '/plans/free/limits/limit/per-ip')).status, 404);
      assert.equal((await f.call('POST', '/plans', { body: { name: 'gone' } })).status, 201);
      assert.equal((await f.call('DELETE', '/plans/gone')).status, 204);
      assert.equal((await f.call('GET', '/plans/gone')).status, 404);
    });

    it('answers bad input with a 400 naming the field, a taken name or a plan in use with a 409', async () => {
      const cases: [string, string, object | undefined, string][] = [
        ['POST', '/plans', { name: 'bad name' }, 'body.name'],
        ['POST', '/plans', { name: 'x', tiers: 3 }, 'body.tiers'],
        ['POST', '/plans', {}, 'body.name'],
        ['PUT', '/plans/free/limits/tier/orders', free, 'scope'],
        ['PUT', '/plans/free/limits/route', free, 'target'],
        ['PUT', '/plans/free/limits/global/orders', free, 'target'],
        ['PUT', '/plans/free/limits/route/or:ders', free, 'target'],
        ['PUT', '/plans/free/limits/route/orders', { policy: 'token_bucket', capacity: -1, refillPerSecond: 1 }, 'body.capacity'],
        ['PUT', '/plans/fr%7Bee/limits/global', free, 'name'],
        ['PUT', '/assignments/group/acme', { plan: 'free' }, 'subject'],
        ['PUT', '/assignments/tenant/~anon', { plan: 'free' }, 'tenant'],
        ['PUT', '/assignments/tenant/acme', { plan: '' }, 'body.plan'],
        ['PUT', '/assignments/tenant/acme', { plan: 'free', extra: 1 }, 'body.extra'],
      ];
      for (const [method, path, body, field] of cases) {
        const answer = await f.call(method, path, { body });
        assert.equal(answer.status, 400, `${method} ${path}: ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error.field, field, `${method} ${path}`);
      }
      assert.equal((await f.call('POST', '/plans', { body: { name: 'free' } })).body.error.code, 'ERR_PLAN_EXISTS');
      assert.equal((await f.call('PUT', '/plans/nope/limits/global', { body: free })).status, 404);
      assert.equal((await f.call('PUT', '/assignments/tenant/acme', { body: { plan: 'nope' } })).status, 404);
      assert.equal((await f.call('PUT', '/assignments/tenant/in-use', { body: { plan: 'free' } })).status, 200);
      const refused = await f.call('DELETE', '/plans/free');
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, 'ERR_PLAN_IN_USE');
      assert.equal((await f.call('DELETE', '/assignments/tenant/in-use')).status, 204);
      assert.equal((await f.call('DELETE', '/assignments/tenant/in-use')).status, 404);
    });

    it('a read token lists plans but may not change them', async () => {
      const token = (await f.call('POST', '/tokens', { body: { name: 'plans-reader', role: 'read' } })).body.token;
      assert.equal((await f.call('GET', '/plans', { token })).status, 200);
      const refused = await f.call('PUT', '/plans/free/limits/global', { body: pro, token });
      assert.equal(refused.status, 403);
      assert.equal((await f.call('POST', '/plans', { body: { name: 'sneaky' }, token })).status, 403);
    });

    it('audits every change, ok or failed, with the plan as it was before', async () => {
      const entries = (await f.call('GET', '/audit?kind=plan&limit=100')).body.entries as { action: string; target: string; outcome: string; before: unknown }[];
      const seen = new Set(entries.map((e) => `${e.action} ${e.target} ${e.outcome}`));
      for (const expected of [
        'POST /plans free ok',
        'PUT /plans/{name}/limits/global free/global ok',
        'PUT /plans/{name}/limits/{scope}/{id} free/route/orders ok',
        'DELETE /plans/{name}/limits/{scope}/{id} free/limit/per-ip ok',
        'DELETE /plans/{name} gone ok',
        'PUT /assignments/{subject}/{id} tenant/in-use ok',
        'DELETE /assignments/{subject}/{id} tenant/in-use ok',
        'DELETE /plans/{name} free failed',
        'PUT /plans/{name}/limits/global free/global failed',
        'POST /plans (new) failed',
      ]) {
        assert.ok(seen.has(expected), `${expected} in ${[...seen].join('; ')}`);
      }
      const deletedLimit = entries.find((e) => e.action === 'DELETE /plans/{name}/limits/{scope}/{id}' && e.outcome === 'ok');
      assert.ok(JSON.stringify(deletedLimit?.before).includes('per-ip'), 'before holds the plan with the deleted limit');
    });

    it('own rule > plan > default, a key on its own plan, and changes seen by another instance within a second', async () => {
      assert.equal((await f.call('POST', '/plans', { body: { name: 'pro' } })).status, 201);
      assert.equal((await f.call('PUT', '/plans/pro/limits/global', { body: pro })).status, 200);
      const tenants = Array.from({ length: 40 }, (_, i) => `t-${i}`);
      for (const tenant of tenants) assert.equal((await f.call('PUT', `/assignments/tenant/${tenant}`, { body: { plan: 'free' } })).status, 200);
      assert.equal((await f.call('PUT', '/rules/t-0/orders', { body: { policy: 'token_bucket', capacity: 7, refillPerSecond: 1 } })).status, 200);
      await eventually(() => {
        assert.deepEqual(pick(peer.resolve('t-0', 'orders')), { match: 'tenant-route', capacity: 7, plan: undefined }, 'own rule first');
        assert.deepEqual(pick(peer.resolve('t-1', 'orders')), { match: 'plan', capacity: undefined, plan: 'free' }, "the plan's route limit");
        assert.deepEqual(pick(peer.resolve('t-1', 'search')), { match: 'plan', capacity: 5, plan: 'free' }, "the plan's global limit");
        assert.deepEqual(pick(peer.resolve('nobody', 'search')), { match: 'default', capacity: 20, plan: undefined });
      }, 1000);
      const before = await stores.store.plans.listAssignments({ plan: 'free' });
      // One row changes; every tenant on the plan sees it.
      assert.equal((await f.call('PUT', '/plans/free/limits/global', { body: { policy: 'token_bucket', capacity: 9, refillPerSecond: 1 } })).status, 200);
      await eventually(() => {
        for (const tenant of tenants.slice(1)) assert.equal(pick(peer.resolve(tenant, 'search')).capacity, 9);
      }, 1000);
      assert.deepEqual(await stores.store.plans.listAssignments({ plan: 'free' }), before, 'no assignment row was touched');
      // Moving one tenant: one row.
      assert.equal((await f.call('PUT', '/assignments/tenant/t-2', { body: { plan: 'pro' } })).status, 200);
      await eventually(() => assert.deepEqual(pick(peer.resolve('t-2', 'search')), { match: 'plan', capacity: 50, plan: 'pro' }), 1000);
      // A key on its own plan, over its tenant's; a plan named by the request (a JWT claim) over both, when it exists.
      const key = (await f.call('POST', '/keys', { body: { tenant: 't-3' } })).body;
      assert.equal((await f.call('PUT', `/assignments/key/${key.id}`, { body: { plan: 'pro' } })).status, 200);
      await eventually(() => assert.deepEqual(peer.identityFor(key.key), { tenant: 't-3', plan: 'pro' }), 1000);
      assert.equal(pick(peer.resolve('t-3', 'search', { plan: 'pro' })).capacity, 50);
      assert.equal(pick(peer.resolve('t-3', 'search', { plan: 'no-such-plan' })).capacity, 9, "an unknown plan: the tenant's");
      assert.equal(pick(peer.resolve('t-4', 'search', { plan: 'pro' })).plan, 'pro');
    });
  });
}

function pick(resolved: { match: string; plan?: string; rule: object }): { match: string; capacity: number | undefined; plan: string | undefined } {
  return { match: resolved.match, capacity: (resolved.rule as { capacity?: number }).capacity, plan: resolved.plan };
}
