// The same checks of stored allow and deny lists, run on the embedded store
// and on PostgreSQL (lists-embedded.int.test.ts, lists-postgres.int.test.ts):
// two full Sluice instances (gateway and admin API) on one store; an entry
// added through the first's admin API refuses requests on the second's gateway
// within the propagation bound (1 s), a deleted one stops applying; 400s name
// the field; roles; audit entries; a header value never stored or echoed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningSluice, startSluice } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { silentLogger } from '../../src/rules/logger.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import type { RulesRuntime } from '../../src/rules/runtime.js';
import type { RuleStore } from '../../src/rules/store.js';
import { call, silent, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { eventually } from '../helpers/poll.js';
import { type AdminCall, adminCaller } from '../helpers/team-fixture.js';

const TOKEN = 'lists-suite-admin-token-0123456789';
const yaml = `
routes:
  - id: api
    path: /api
    upstream: \${UP}
    anonymous: true
    limits:
      - { id: api-ceiling, key: route, rule: { policy: fixed_window, limit: 1000, windowMs: 600000 } }
      - { id: per-ip, key: ip, rule: { policy: fixed_window, limit: 1, windowMs: 600000 } }
      - { id: api-inflight, kind: concurrency, key: route, max: 10 }
  - id: other
    path: /other
    upstream: \${UP}
    anonymous: true
    limits:
      - { id: other-ceiling, key: route, rule: { policy: fixed_window, limit: 1000, windowMs: 600000 } }
clientIp: { trustedProxies: [127.0.0.1/32, '::1/128'] }
`;

export interface ListsStores {
  store: RuleStore;
  /** Another instance's store on the same data (PostgreSQL), or the same store (embedded: one process). */
  peer: RuleStore;
  close(): Promise<void>;
}

/** A rules runtime over a store the test owns (closing it leaves the store open). */
async function runtimeOver(store: RuleStore): Promise<RulesRuntime> {
  const cache = new RuleCache({ store, defaultRule: { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 }, logger: silentLogger });
  await cache.start();
  return { store, cache, close: () => cache.close() };
}

export function listsSuite(name: string, open: () => Promise<ListsStores>): void {
  describe(`stored allow and deny lists (${name})`, () => {
    let stores: ListsStores;
    let upstream: TestUpstream;
    let first: RunningSluice;
    let second: RunningSluice;
    let admin: AdminCall;
    let peerCache: RuleCache;
    before(async () => {
      stores = await open();
      upstream = await startUpstream((_req, res) => res.end('ok'));
      const config = parseConfig(yaml, { source: 'lists.yaml', env: { SLUICE_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, UP: upstream.url } });
      first = await startSluice(config, { logger: silent, admin: true, openRules: () => runtimeOver(stores.store), shutdownGraceMs: 1000 });
      const peerRuntime = await runtimeOver(stores.peer);
      peerCache = peerRuntime.cache;
      second = await startSluice(config, { logger: silent, openRules: async () => peerRuntime, shutdownGraceMs: 1000 });
      admin = adminCaller(first.adminUrl!, TOKEN);
    });
    after(async () => {
      await Promise.allSettled([first?.close(), second?.close()]);
      await upstream?.close();
      await stores?.close();
    });
    const from = (app: RunningSluice, ip: string, path = '/api', headers: Record<string, string> = {}) => call(`${app.url}${path}`, { headers: { 'x-forwarded-for': ip, ...headers } });

    it('an entry added on one instance denies on the other within a second; deleted, it stops applying', async () => {
      assert.equal((await from(second, '203.0.113.9')).status, 200);
      const added = await admin('POST', '/lists', { body: { action: 'deny', cidr: '203.0.113.0/24', note: 'scanner network' } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      assert.match(added.body.id, /^le_/);
      assert.deepEqual({ ...added.body, id: undefined, createdAt: undefined }, { id: undefined, action: 'deny', cidr: '203.0.113.0/24', note: 'scanner network', createdAt: undefined });
      await eventually(async () => {
        const denied = await from(second, '203.0.113.10');
        assert.equal(denied.status, 403);
        assert.deepEqual(JSON.parse(denied.body), { error: 'denied' }, 'the code, never the entry');
      }, 1000);
      assert.equal((await from(first, '203.0.113.11')).status, 403, 'the writing instance too');
      assert.equal((await from(second, '198.51.100.1')).status, 200, 'another network is not');
      assert.deepEqual((await admin('GET', '/lists')).body.entries.map((e: { id: string }) => e.id), [added.body.id]);
      assert.equal((await admin('GET', `/lists/${added.body.id}`)).body.cidr, '203.0.113.0/24');
      assert.equal((await admin('DELETE', `/lists/${added.body.id}`)).status, 204);
      await eventually(async () => assert.equal((await from(second, '203.0.113.12')).status, 200), 1000);
      assert.equal((await admin('DELETE', `/lists/${added.body.id}`)).status, 404);
      assert.equal((await admin('GET', `/lists/${added.body.id}`)).status, 404);
    });

    it('an allow lifts every limit, or only the one it names, on the other instance', async () => {
      const ip = '192.0.2.20';
      assert.deepEqual([(await from(second, ip)).status, (await from(second, ip)).status], [200, 429], 'per-ip: one request');
      const lift = await admin('POST', '/lists', { body: { action: 'allow', cidr: '192.0.2.0/24', limit: 'per-ip', routes: ['api'] } });
      assert.equal(lift.status, 201, JSON.stringify(lift.body));
      await eventually(async () => assert.equal((await from(second, ip)).status, 200), 1000);
      assert.equal((await from(second, ip)).status, 200, 'per-ip lifted');
      const partner = await admin('POST', '/lists', { body: { action: 'allow', cidr: '2001:db8::/32', expiresAt: '2099-01-01T00:00:00Z' } });
      assert.equal(partner.status, 201, JSON.stringify(partner.body));
      await eventually(async () => assert.deepEqual([(await from(second, '2001:db8::1')).status, (await from(second, '2001:db8::1')).status], [200, 200]), 1000);
    });

    it('a header entry keeps only the value\'s hash, and matches it', async () => {
      const added = await admin('POST', '/lists', { body: { action: 'deny', header: { name: 'User-Agent', value: 'BadBot/2.1' } } });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      assert.equal(added.body.header.name, 'user-agent');
      assert.match(added.body.header.valueSha256, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(JSON.stringify(added.body).includes('BadBot'), false, 'the value is never echoed');
      assert.equal(JSON.stringify(await stores.store.lists.list()).includes('BadBot'), false, 'nor stored');
      await eventually(async () => assert.equal((await from(second, '198.51.100.3', '/other', { 'user-agent': 'BadBot/2.1' })).status, 403), 1000);
      assert.equal((await from(second, '198.51.100.3', '/other', { 'user-agent': 'GoodBot/1.0' })).status, 200);
      const audit = (await admin('GET', '/audit?kind=list&limit=100')).body.entries;
      assert.equal(JSON.stringify(audit).includes('BadBot'), false, 'nor written to the audit log');
    });

    it('an expired entry stops applying', async () => {
      const added = await admin('POST', '/lists', { body: { action: 'deny', tenant: 'acme', expiresAt: '2099-01-01T00:00:00Z' } });
      assert.equal(added.status, 201);
      await eventually(() => assert.equal(checkTenant(peerCache, 'acme', Date.now()), 'deny'), 1000);
      assert.equal(checkTenant(peerCache, 'acme', Date.parse('2099-01-01T00:00:01Z')), undefined, 'past its expiry');
      const listed = (await admin('GET', '/lists')).body.entries.find((e: { id: string }) => e.id === added.body.id);
      assert.equal(listed.expiresAt, '2099-01-01T00:00:00.000Z');
      assert.equal(listed.expired, undefined);
    });

    it('answers bad input with a 400 naming the field, and writes nothing', async () => {
      const before = (await admin('GET', '/lists')).body.entries.length;
      const cases: [object | string, string][] = [
        [{ action: 'deny', cidr: '203.0.113.0/33' }, 'body.cidr'],
        [{ action: 'deny', cidr: 'example.com' }, 'body.cidr'],
        [{ action: 'block', cidr: '203.0.113.0/24' }, 'body.action'],
        [{ action: 'deny', cidr: '203.0.113.0/24', tenant: 'acme' }, 'body.tenant'],
        [{ action: 'deny' }, 'body.cidr'],
        [{ action: 'deny', tenant: 'acme', expiresAt: 'tomorrow' }, 'body.expiresAt'],
        [{ action: 'deny', tenant: 'acme', expiresAt: '2001-01-01T00:00:00Z' }, 'body.expiresAt'],
        [{ action: 'deny', tenant: 'acme', limit: 'per-ip' }, 'body.limit'],
        [{ action: 'allow', tenant: 'acme', routes: ['nope'] }, 'body.routes.0'],
        [{ action: 'allow', tenant: 'acme', limit: 'no-such-limit' }, 'body.limit'],
        [{ action: 'allow', tenant: 'acme', limit: 'api-inflight' }, 'body.limit'],
        [{ action: 'deny', claim: { name: 'sub', value: 'u1' } }, 'body.claim'],
        [{ action: 'deny', tenant: 'acme', colour: 'red' }, 'body.colour'],
        [{ action: 'deny', header: { name: 'x-a' } }, 'body.header.value'],
      ];
      for (const [body, field] of cases) {
        const answer = await admin('POST', '/lists', { body });
        assert.equal(answer.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
        assert.deepEqual([answer.body.error.code, answer.body.error.field], ['ERR_LIST_ENTRY_INVALID', field], JSON.stringify(body));
      }
      assert.equal((await admin('POST', '/lists', { body: '{not json' })).status, 400);
      assert.equal((await admin('GET', '/lists/a:b')).body.error?.field, 'id');
      assert.equal((await admin('GET', '/lists')).body.entries.length, before);
    });

    it('a read token lists entries but may not change them', async () => {
      const token = (await admin('POST', '/tokens', { body: { name: 'lists-reader', role: 'read' } })).body.token;
      assert.equal((await admin('GET', '/lists', { token })).status, 200);
      assert.equal((await admin('POST', '/lists', { body: { action: 'deny', tenant: 'x' }, token })).status, 403);
      const id = (await admin('GET', '/lists')).body.entries[0].id;
      assert.equal((await admin('DELETE', `/lists/${id}`, { token })).status, 403);
    });

    it('audits every change, ok or failed, with the entry as it was before a delete', async () => {
      const entries = (await admin('GET', '/audit?kind=list&limit=100')).body.entries as { action: string; target: string; outcome: string; before: unknown; after: unknown }[];
      const seen = entries.map((e) => `${e.action} ${e.outcome}`);
      for (const expected of ['POST /lists ok', 'DELETE /lists/{id} ok', 'POST /lists failed', 'DELETE /lists/{id} failed']) assert.ok(seen.includes(expected), `${expected} in ${seen.join('; ')}`);
      const deleted = entries.find((e) => e.action === 'DELETE /lists/{id}' && e.outcome === 'ok');
      assert.equal((deleted?.before as { cidr?: string } | undefined)?.cidr, '203.0.113.0/24', 'before holds the deleted entry');
      const added = entries.find((e) => e.action === 'POST /lists' && e.outcome === 'ok');
      assert.match(added?.target ?? '', /^le_/, 'an addition names the new id');
    });
  });
}

/** The second instance's verdict for a tenant at `now`, from the stored lists its gateway reads. */
function checkTenant(cache: RuleCache, tenant: string, now: number): string | undefined {
  return cache.lists().check({ route: 'api', tenant, headers: {}, now }).action;
}
