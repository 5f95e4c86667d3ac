import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ErrorCode, SLUICE_ERRORS } from '../../src/core/error-codes.js';
import { eventually } from '../helpers/poll.js';
import { type AdminFixture, startAdminFixture, TOKEN } from '../helpers/admin-fixture.js';

let f: AdminFixture;
before(async () => {
  f = await startAdminFixture();
});
after(async () => {
  await f.close();
});

const bucket = { policy: 'token_bucket', capacity: 200, refillPerSecond: 100 };

describe('admin API: health and auth', () => {
  it('answers /healthz and /readyz without a token', async () => {
    assert.deepEqual(await f.call('GET', '/healthz', { token: null }), { status: 200, body: { status: 'ok' } });
    const ready = await f.call('GET', '/readyz', { token: null });
    assert.equal(ready.status, 200);
    assert.equal(ready.body.ready, true);
    assert.equal(ready.body.rules.loaded, true);
    assert.equal(ready.body.rules.storeReachable, true);
  });

  it('refuses a missing or wrong token with 401, whatever its length', async () => {
    for (const token of [null, '', 'wrong', `${TOKEN}x`, TOKEN.slice(0, -1), 'x'.repeat(5000)]) {
      const res = await f.call('GET', '/rules', { token });
      assert.equal(res.status, 401, String(token));
      assert.equal(res.body.error.code, 'ERR_UNAUTHORIZED');
    }
    const basic = await f.call('GET', '/rules', { token: null, headers: { authorization: `Basic ${TOKEN}` } });
    assert.equal(basic.status, 401);
  });

  it('refuses everything but health checks when no token is configured, saying SLUICE_ADMIN_TOKEN is not set', async () => {
    const open = await startAdminFixture(null);
    try {
      for (const [method, path] of [['GET', '/rules'], ['PUT', '/rules/a/b'], ['POST', '/keys'], ['GET', '/openapi.json']] as const) {
        const res = await open.call(method, path, { token: 'anything', body: method === 'GET' ? undefined : bucket });
        assert.equal(res.status, 403);
        assert.equal(res.body.error.code, 'ERR_ADMIN_DISABLED');
        assert.match(res.body.error.message, /SLUICE_ADMIN_TOKEN is not set/);
      }
      assert.equal((await open.call('GET', '/healthz', { token: null })).status, 200);
      assert.deepEqual(await open.store.listRules(), []);
    } finally {
      await open.close();
    }
  });
});

describe('admin API: rules', () => {
  it('puts, gets, lists and deletes a rule, and the cache sees it', async () => {
    const put = await f.call('PUT', '/rules/shop-a/create-order', { body: { ...bucket, shadow: true } });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.rule, { ...bucket, shadow: true });
    const got = await f.call('GET', '/rules/shop-a/create-order');
    assert.deepEqual(got.body.rule, { ...bucket, shadow: true });
    await eventually(() => assert.equal(f.cache.resolve('shop-a', 'create-order').rule.shadow, true));
    const any = await f.call('PUT', '/rules/shop-a/*', { body: { policy: 'fixed_window', limit: 10, windowMs: 1000 } });
    assert.equal(any.status, 200);
    const listed = await f.call('GET', '/rules?tenant=shop-a');
    assert.deepEqual(listed.body.rules.map((r: { route: string }) => r.route), ['*', 'create-order']);
    assert.equal((await f.call('DELETE', '/rules/shop-a/create-order')).status, 204);
    assert.equal((await f.call('DELETE', '/rules/shop-a/create-order')).status, 404);
    assert.equal((await f.call('GET', '/rules/shop-a/create-order')).status, 404);
    assert.equal((await f.call('DELETE', '/rules/shop-a/%2A')).status, 204);
  });

  it("keeps a tenant's calendar quota (its zone and billing day) as put, and the cache resolves it", async () => {
    const monthly = { policy: 'fixed_window', limit: 10_000, calendar: { unit: 'month', timeZone: 'America/New_York', anchor: 31 } };
    const put = await f.call('PUT', '/rules/globex/*', { body: monthly });
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.rule, monthly);
    assert.deepEqual((await f.call('GET', '/rules/globex/*')).body.rule, monthly);
    await eventually(() => assert.deepEqual(f.cache.resolve('globex', 'anything').rule, monthly));
    assert.equal((await f.call('DELETE', '/rules/globex/%2A')).status, 204);
  });

  const longId = 'x'.repeat(65);
  const badPuts: [string, string, string | object, number, string, RegExp?][] = [
    ['unknown policy', '/rules/shop-a/r', { policy: 'magic', capacity: 1 }, 400, 'body.policy', /unknown policy/],
    ['missing policy', '/rules/shop-a/r', { capacity: 1 }, 400, 'body.policy'],
    ['zero capacity', '/rules/shop-a/r', { ...bucket, capacity: 0 }, 400, 'body.capacity', /at least 1/],
    ['negative refill', '/rules/shop-a/r', { ...bucket, refillPerSecond: -5 }, 400, 'body.refillPerSecond', /positive/],
    ['fractional capacity', '/rules/shop-a/r', { ...bucket, capacity: 2.5 }, 400, 'body.capacity', /integer/],
    ['string capacity', '/rules/shop-a/r', { ...bucket, capacity: '200' }, 400, 'body.capacity'],
    ['absurd capacity', '/rules/shop-a/r', { ...bucket, capacity: 1e15 }, 400, 'body.capacity', /at most/],
    ['absurd window', '/rules/shop-a/r', { policy: 'fixed_window', limit: 5, windowMs: 1e13 }, 400, 'body.windowMs', /at most/],
    ['a refill too slow for any store (1e-300/s)', '/rules/shop-a/r', { policy: 'token_bucket', capacity: 5, refillPerSecond: 1e-300 }, 400, 'body.refillPerSecond', /366 days/],
    ['a GCRA that takes over 366 days to fill', '/rules/shop-a/r', { policy: 'gcra', capacity: 1e9, refillPerSecond: 1e-6 }, 400, 'body.refillPerSecond', /at least 31\.63/],
    ['a leaky bucket that takes over 366 days to drain', '/rules/shop-a/r', { policy: 'leaky_bucket', ratePerSecond: 1e-8, burst: 1 }, 400, 'body.ratePerSecond', /366 days/],
    ['a region share too small to scale by', '/rules/shop-a/r', { ...bucket, regionShares: { eu: 1e-9 } }, 400, 'body.regionShares.eu', /at least 0\.001/],
    ['unknown field', '/rules/shop-a/r', { ...bucket, burst: 5 }, 400, 'body', /unknown field\(s\) burst/],
    ['shadow not a boolean', '/rules/shop-a/r', { ...bucket, shadow: 'yes' }, 400, 'body.shadow'],
    ['delay with nodelay', '/rules/shop-a/r', { policy: 'leaky_bucket', ratePerSecond: 1, burst: 2, delay: 1, nodelay: true }, 400, 'body.nodelay'],
    ['an unknown time zone', '/rules/shop-a/r', { policy: 'fixed_window', limit: 5, calendar: { unit: 'month', timeZone: 'Europe/Atlantis' } }, 400, 'body.calendar.timeZone', /unknown time zone/],
    ['a billing anchor of 32', '/rules/shop-a/r', { policy: 'fixed_window', limit: 5, calendar: { unit: 'month', timeZone: 'UTC', anchor: 32 } }, 400, 'body.calendar.anchor', /1-31/],
    ['a week anchor of 0', '/rules/shop-a/r', { policy: 'fixed_window', limit: 5, calendar: { unit: 'week', timeZone: 'UTC', anchor: 0 } }, 400, 'body.calendar.anchor', /ISO weekday/],
    ['calendar on a policy that cannot take it', '/rules/shop-a/r', { policy: 'sliding_window_counter', limit: 5, windowMs: 1000, calendar: { unit: 'day', timeZone: 'UTC' } }, 400, 'body.calendar', /fixed_window only/],
    ['array body', '/rules/shop-a/r', [bucket], 400, 'body'],
    ['null body', '/rules/shop-a/r', 'null', 400, 'body'],
    ['empty body', '/rules/shop-a/r', '', 400, 'body'],
    ['malformed JSON', '/rules/shop-a/r', '{"policy": "token_bucket", capacity: 1}', 400, 'body', /malformed JSON/],
    ['tenant with a colon', '/rules/shop:a/r', bucket, 400, 'tenant'],
    ['tenant with braces', '/rules/%7Bshop%7D/r', bucket, 400, 'tenant'],
    ['route with a space', '/rules/shop-a/a%20b', bucket, 400, 'route'],
    ['route with a control character', '/rules/shop-a/a%00b', bucket, 400, 'route'],
    ['route over 64 characters', `/rules/shop-a/${longId}`, bucket, 400, 'route', /64/],
    ['tenant over 64 characters', `/rules/${longId}/r`, bucket, 400, 'tenant', /64/],
    ['malformed percent-encoding', '/rules/shop-a/%E0%A4%A', bucket, 400, 'path'],
    ['body over 64 KiB', '/rules/shop-a/r', { ...bucket, pad: 'x'.repeat(70_000) }, 413, 'body', /65536 bytes/],
  ];
  for (const [name, path, body, status, field, message] of badPuts) {
    it(`refuses ${name} with ${status} naming ${field}, writing nothing`, async () => {
      const res = await f.call('PUT', path, { body });
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.equal(res.body.error.field, field);
      // The status is the one the catalogue (docs/errors.md) gives the code.
      assert.equal(res.status, SLUICE_ERRORS[res.body.error.code as ErrorCode].status, res.body.error.code);
      if (message) assert.match(res.body.error.message, message);
      assert.deepEqual(await f.store.listRules(), []);
    });
  }

  it('answers 404 for unknown paths and 405 for wrong methods, each with its own code', async () => {
    const answers = await Promise.all([f.call('GET', '/nope'), f.call('GET', '/rules/a'), f.call('POST', '/rules/a/b', { body: bucket }), f.call('PATCH', '/keys')]);
    assert.deepEqual(
      answers.map((res) => [res.status, res.body.error.code]),
      [
        [404, 'ERR_NOT_FOUND'],
        [404, 'ERR_NOT_FOUND'],
        [405, 'ERR_METHOD_NOT_ALLOWED'],
        [405, 'ERR_METHOD_NOT_ALLOWED'],
      ],
    );
    assert.deepEqual(await f.store.listRules(), []);
  });
});

describe('admin API: keys', () => {
  it('creates a key shown once, lists it without the key, and revokes it', async () => {
    const created = await f.call('POST', '/keys', { body: { tenant: 'shop-a' } });
    assert.equal(created.status, 201);
    assert.match(created.body.key, /^[A-Za-z0-9_-]{43}$/);
    await eventually(() => assert.equal(f.cache.tenantFor(created.body.key), 'shop-a'));
    const listed = await f.call('GET', '/keys?tenant=shop-a');
    assert.deepEqual(listed.body.keys.map((k: { id: string }) => k.id), [created.body.id]);
    assert.equal(JSON.stringify(listed.body).includes(created.body.key), false);
    const revoked = await f.call('DELETE', `/keys/${created.body.id}`);
    assert.equal(revoked.status, 200);
    assert.ok(revoked.body.revokedAt);
    await eventually(() => assert.equal(f.cache.tenantFor(created.body.key), undefined));
    assert.equal((await f.call('DELETE', '/keys/key_nothere')).status, 404);
  });

  const badKeys: [string, string, string | object | undefined, string][] = [
    ['a missing tenant', 'POST', {}, 'body.tenant'],
    ['a bad tenant', 'POST', { tenant: 'shop a' }, 'body.tenant'],
    ['a tenant of *', 'POST', { tenant: '*' }, 'body.tenant'],
    ['a non-string tenant', 'POST', { tenant: 42 }, 'body.tenant'],
    ['an unknown field', 'POST', { tenant: 'shop-a', admin: true }, 'body.admin'],
    ['malformed JSON', 'POST', '{tenant', 'body'],
    ['no body', 'POST', undefined, 'body'],
  ];
  for (const [name, method, body, field] of badKeys) {
    it(`refuses a key with ${name}, creating nothing`, async () => {
      const before = (await f.store.listKeys()).length;
      const res = await f.call(method, '/keys', { body });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.field, field);
      assert.equal((await f.store.listKeys()).length, before);
    });
  }

  it('refuses a bad key id and a bad tenant filter', async () => {
    assert.equal((await f.call('DELETE', '/keys/bad.id')).body.error.field, 'id');
    assert.equal((await f.call('GET', '/keys?tenant=a%20b')).body.error.field, 'tenant');
  });
});

describe('admin API: buckets and OpenAPI', () => {
  it('inspects a bucket under its resolved rule and resets it', async () => {
    await f.call('PUT', '/rules/shop-b/orders', { body: { policy: 'token_bucket', capacity: 5, refillPerSecond: 0.001 } });
    await eventually(() => assert.equal(f.cache.resolve('shop-b', 'orders').match, 'tenant-route'));
    const rule = f.cache.resolve('shop-b', 'orders').rule;
    for (let i = 0; i < 3; i++) await f.engine.decide({ tag: 'shop-b', name: 'orders' }, rule);
    const inspected = await f.call('GET', '/buckets/shop-b/orders');
    assert.equal(inspected.status, 200);
    assert.equal(inspected.body.match, 'tenant-route');
    assert.equal(inspected.body.decision.remaining, 2);
    assert.equal(inspected.body.location, 'memory');
    assert.ok(inspected.body.ttlMs > 0);
    assert.equal((await f.call('DELETE', '/buckets/shop-b/orders')).status, 204);
    assert.equal((await f.call('GET', '/buckets/shop-b/orders')).body.decision.remaining, 5);
    assert.equal((await f.call('GET', '/buckets/shop-b/*')).body.error.field, 'route');
    await f.call('DELETE', '/rules/shop-b/orders');
  });

  it('serves an OpenAPI 3.1 document describing every endpoint and the rule schema', async () => {
    const doc = await f.call('GET', '/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    for (const path of ['/healthz', '/readyz', '/rules', '/rules/{tenant}/{route}', '/keys', '/keys/{id}', '/buckets/{tenant}/{route}', '/openapi.json', '/metrics', '/ui/api/overview']) {
      assert.ok(doc.body.paths[path], path);
    }
    // The open endpoints are documented as open: no bearer token required.
    for (const path of ['/healthz', '/readyz', '/metrics']) assert.equal(doc.body.paths[path].get.security, undefined, path);
    const policies = doc.body.components.schemas.Rule.oneOf.map((s: { properties: { policy: { const: string } } }) => s.properties.policy.const);
    assert.deepEqual(policies.sort(), ['fixed_window', 'gcra', 'leaky_bucket', 'sliding_window_counter', 'sliding_window_log', 'token_bucket']);
  });
});
