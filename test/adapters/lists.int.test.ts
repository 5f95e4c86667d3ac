// The adapters' `lists` option on real Fastify and Express apps over real
// HTTP: a denied address, header or tenant is a 403 {"error":"denied"} before
// any bucket is charged; an allowed one skips every limit (no rate-limit
// headers); a limit-scoped allow lifts that limit only; the address is the one
// the clientIp rules resolve. Entries are checked by the config file's schema
// and a refused one names its field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import type { AdapterListEntry } from '../../src/adapters/express.js';
import { type Engine, MemoryStore, parseRule, SluiceError, StoreEngine } from '../../src/index.js';
import { call, listenExpress, listenFastify, type Running } from '../helpers/http-apps.js';

const ONE = parseRule({ policy: 'fixed_window', limit: 1, windowMs: 600_000 });
const LISTS: AdapterListEntry[] = [
  { action: 'deny', cidr: '203.0.113.0/24', note: 'a scanner network' },
  { action: 'allow', cidr: '203.0.113.5' },
  { action: 'deny', header: { name: 'User-Agent', value: 'BadBot/2.1' } },
  { action: 'allow', cidr: '198.51.100.0/24', limit: 'per-ip' },
];
const from = (ip: string, extra: Record<string, string> = {}) => ({ 'x-forwarded-for': ip, ...extra });
const statuses = async (url: string, headers: Record<string, string>, n = 2) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(url, headers)).status);
  return out;
};

describe('allow and deny lists in the adapters', () => {
  let engine: Engine;
  const running: Record<string, Running> = {};
  before(async () => {
    engine = new StoreEngine(new MemoryStore());
    const clientIp = { trustedProxies: ['127.0.0.1/32'] };
    const limits = [
      { id: 'per-ip', rule: ONE, key: 'ip' as const },
      { id: 'ceiling', rule: parseRule({ policy: 'fixed_window', limit: 3, windowMs: 600_000 }), key: 'route' as const },
    ];
    const fastify = Fastify();
    await fastify.register(sluiceFastify, { engine, limits, clientIp, lists: LISTS });
    fastify.get('/', async () => ({ ok: true }));
    running.fastify = await listenFastify(fastify);
    const app = express();
    app.use(sluiceExpress({ engine, rule: ONE, route: 'by-user', key: (req) => req.headers['x-user'] as string | undefined, clientIp, lists: LISTS.slice(0, 3) }));
    app.use((_req, res) => {
      res.json({ ok: true });
    });
    running.express = await listenExpress(app);
    const tenants = express();
    tenants.use(sluiceExpress({ engine, resolve: (req) => ({ tenant: String(req.headers['x-tenant']), route: 'tenants', rule: ONE }), lists: [{ action: 'deny', tenant: 'evil' }, { action: 'allow', tenant: 'partner' }] }));
    tenants.use((_req, res) => {
      res.json({ ok: true });
    });
    running.tenants = await listenExpress(tenants);
  });
  after(async () => {
    for (const app of Object.values(running)) await app.close();
    await engine.close();
  });

  it('Fastify: a denied address is 403 naming the code, before any bucket is charged', async () => {
    const url = `${running.fastify!.url}/`;
    const denied = await call(url, from('203.0.113.9'));
    assert.equal(denied.status, 403);
    assert.deepEqual(JSON.parse(denied.body), { error: 'denied' });
    assert.equal(denied.headers['x-ratelimit-limit'], undefined);
    assert.deepEqual(await statuses(url, from('192.0.2.1')), [200, 429], 'the ceiling and per-ip were not charged by the deny');
    assert.equal((await call(url, from('192.0.2.2', { 'user-agent': 'BadBot/2.1' }))).status, 403, 'a header entry');
  });

  it('Fastify: an allowed address skips every limit; a limit-scoped allow lifts that limit only', async () => {
    const url = `${running.fastify!.url}/`;
    const allowed = [];
    for (let i = 0; i < 4; i++) allowed.push(await call(url, from('203.0.113.5')));
    assert.deepEqual(
      allowed.map((reply) => reply.status),
      [200, 200, 200, 200],
    );
    assert.equal(allowed[0]!.headers['x-ratelimit-limit'], undefined, 'no limit applied');
    // per-ip lifted for 198.51.100.0/24; the ceiling (3, one used above) still applies
    assert.deepEqual(await statuses(url, from('198.51.100.1'), 3), [200, 200, 429]);
  });

  it('Express: deny and allow around a key function', async () => {
    const url = `${running.express!.url}/`;
    assert.equal((await call(url, from('203.0.113.1', { 'x-user': 'ann' }))).status, 403);
    assert.deepEqual(await statuses(url, from('192.0.2.1', { 'x-user': 'ann' })), [200, 429], "ann's bucket was not charged by the deny");
    assert.deepEqual(await statuses(url, from('203.0.113.5', { 'x-user': 'bob' }), 3), [200, 200, 200]);
    const denied = await call(url, from('192.0.2.1', { 'x-user': 'cid', 'user-agent': 'BadBot/2.1' }));
    assert.equal(denied.status, 403);
    assert.deepEqual(JSON.parse(denied.body), { error: 'denied' });
  });

  it("Express with resolve: tenant entries match resolve's tenant", async () => {
    const url = `${running.tenants!.url}/`;
    assert.equal((await call(url, { 'x-tenant': 'evil' })).status, 403);
    assert.deepEqual(await statuses(url, { 'x-tenant': 'partner' }, 3), [200, 200, 200]);
    assert.deepEqual(await statuses(url, { 'x-tenant': 'acme' }), [200, 429]);
  });

  it('a refused entry names its field', () => {
    const refused = (lists: unknown, rule: 'rule' | 'resolve' = 'rule') => {
      const options = rule === 'rule' ? { engine, rule: ONE, route: 'r', lists } : { engine, resolve: () => undefined, lists };
      try {
        sluiceExpress(options as Parameters<typeof sluiceExpress>[0]);
      } catch (error) {
        assert.ok(error instanceof SluiceError);
        return [error.field, error.message];
      }
      return assert.fail('accepted');
    };
    assert.equal(refused([{ action: 'deny', cidr: '203.0.113.0/33' }])[0], 'lists.0.cidr');
    assert.equal(refused([{ action: 'allow', cidr: '10.0.0.0/8' }, { action: 'block', cidr: '10.0.0.0/8' }])[0], 'lists.1.action');
    assert.equal(refused([{ action: 'deny', cidr: '10.0.0.0/8', tenant: 'x' }])[0], 'lists.0.tenant');
    assert.equal(refused([{ action: 'deny', cidr: '10.0.0.0/8', limit: 'r' }])[0], 'lists.0.limit');
    assert.deepEqual(refused([{ action: 'allow', cidr: '10.0.0.0/8', limit: 'nope' }]), ['lists.0.limit', 'lists.0.limit: unknown limit nope; the limits are r']);
    assert.equal(refused([{ action: 'deny', cidr: '10.0.0.0/8', routes: ['r'] }])[0], 'lists.0.routes');
    assert.equal(refused([{ action: 'deny', tenant: 'evil' }])[0], 'lists.0.tenant', 'no tenant without resolve');
    assert.equal(refused({ action: 'deny' })[0], 'lists');
  });
});
