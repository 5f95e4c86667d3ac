// The per-key overrides through the admin API (embedded store, real HTTP) and
// `sluice overrides`: CRUD, canonical selectors, 400s naming the field, the
// rule cache following, the OpenAPI document, and header values never stored raw.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startAdminServer } from '../../src/admin/server.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { silentLogger } from '../../src/rules/logger.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { run as overrides } from '../../src/cli/overrides-command.js';
import { headerBucketId } from '../../src/request-limits/request-limits.js';
import { eventually } from '../helpers/poll.js';
import { type AdminFixture, startAdminFixture, TOKEN } from '../helpers/admin-fixture.js';

let f: AdminFixture;
before(async () => {
  f = await startAdminFixture();
});
after(async () => {
  await f.close();
});

const more = { policy: 'leaky_bucket', ratePerSecond: 1, burst: 50, nodelay: true };
const path = (limitId: string, selector: string) => `/limits/${encodeURIComponent(limitId)}/overrides/${encodeURIComponent(selector)}`;

async function cli(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => void out.push(t), err: (t) => void err.push(t), env: { SLUICE_ADMIN_TOKEN: TOKEN } };
  const code = await overrides([...argv, '--admin', f.admin.url], io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('admin API: overrides', () => {
  it('puts, gets, lists and deletes an override; the rule cache follows', async () => {
    const put = await f.call('PUT', path('login-per-ip', 'ip:203.0.113.0/24'), { body: more });
    assert.equal(put.status, 200);
    assert.deepEqual([put.body.limitId, put.body.selector, put.body.rule], ['login-per-ip', 'ip:203.0.113.0/24', more]);
    // A CIDR's slash may also come unencoded: the remaining segments are the selector.
    const got = await f.call('GET', '/limits/login-per-ip/overrides/ip:203.0.113.0/24');
    assert.equal(got.status, 200);
    assert.equal(got.body.selector, 'ip:203.0.113.0/24');
    await eventually(() => assert.equal(f.cache.status().overrides, 1), 5000);
    assert.deepEqual((await f.call('GET', '/limits/login-per-ip/overrides')).body.overrides.map((o: { selector: string }) => o.selector), ['ip:203.0.113.0/24']);
    assert.equal((await f.call('GET', '/overrides')).body.overrides.length, 1);
    assert.equal((await f.call('DELETE', path('login-per-ip', 'ip:203.0.113.0/24'))).status, 204);
    assert.equal((await f.call('DELETE', path('login-per-ip', 'ip:203.0.113.0/24'))).status, 404);
    assert.equal((await f.call('GET', path('login-per-ip', 'ip:203.0.113.0/24'))).status, 404);
    await eventually(() => assert.equal(f.cache.status().overrides, 0), 5000);
  });

  it('answers in canonical form: an IPv6 address lower-cased and shortened, an exact /32 without its length', async () => {
    const v6 = await f.call('PUT', path('login-per-ip', 'ip:2001:DB8:0:0:0:0:0:0/32'), { body: more });
    assert.equal(v6.body.selector, 'ip:2001:db8::/32');
    const v4 = await f.call('PUT', path('login-per-ip', 'ip:192.0.2.1/32'), { body: more });
    assert.equal(v4.body.selector, 'ip:192.0.2.1');
    for (const selector of ['ip:2001:db8::/32', 'ip:192.0.2.1']) assert.equal((await f.call('DELETE', path('login-per-ip', selector))).status, 204);
  });

  it('stores a header value only as the hash its bucket uses', async () => {
    const put = await f.call('PUT', path('per-user', 'header:alice@example.com'), { body: more });
    assert.equal(put.status, 200);
    assert.equal(put.body.selector, `header:${headerBucketId('alice@example.com')}`);
    // WAL mode: fresh writes sit in the -wal file beside the database.
    const db = f.store.location.replace(/^embedded /, '');
    const bytes = Buffer.concat([db, `${db}-wal`].filter((file) => existsSync(file)).map((file) => readFileSync(file)));
    assert.ok(bytes.includes(headerBucketId('alice@example.com')), 'the hash is written');
    assert.ok(!bytes.includes('alice@example.com'), 'the raw value is not');
    assert.equal((await f.call('DELETE', path('per-user', put.body.selector))).status, 204);
  });

  for (const [name, limitId, selector, body, field] of [
    ['a limit id with a colon', 'login:ip', 'ip:10.0.0.1', more, 'limitId'],
    ['a selector of unknown kind', 'login-per-ip', 'cookie:abc', more, 'selector'],
    ['an address that is not one', 'login-per-ip', 'ip:10.0.0.300', more, 'selector'],
    ['host bits in a CIDR', 'login-per-ip', 'ip:10.1.2.3/8', more, 'selector'],
    ['an IPv6 prefix past 128', 'login-per-ip', 'ip:2001:db8::/129', more, 'selector'],
    ['a reserved tenant', 'per-tenant', 'tenant:~abc', more, 'selector'],
    ['an unknown policy', 'login-per-ip', 'ip:10.0.0.1', { policy: 'bucket' }, 'body.policy'],
    ['a rule missing its limit', 'login-per-ip', 'ip:10.0.0.1', { policy: 'fixed_window', windowMs: 1000 }, 'body.limit'],
    ['no body', 'login-per-ip', 'ip:10.0.0.1', undefined, 'body'],
  ] as const) {
    it(`refuses ${name} with 400 naming ${field}, writing nothing`, async () => {
      const reply = await f.call('PUT', path(limitId, selector), body === undefined ? {} : { body });
      assert.equal(reply.status, 400, JSON.stringify(reply.body));
      assert.equal(reply.body.error.field, field);
      assert.deepEqual(await f.store.overrides.list(), []);
    });
  }

  it('needs the bearer token, and answers 405 for a wrong method', async () => {
    assert.equal((await f.call('GET', '/overrides', { token: null })).status, 401);
    assert.equal((await f.call('PUT', path('login-per-ip', 'ip:10.0.0.1'), { body: more, token: 'wrong' })).status, 401);
    assert.equal((await f.call('POST', '/limits/login-per-ip/overrides')).status, 405);
    assert.equal((await f.call('GET', '/limits/login-per-ip/rules')).status, 404);
  });

  it('is described in the OpenAPI document', async () => {
    const doc = await f.call('GET', '/openapi.json');
    for (const p of ['/overrides', '/limits/{limitId}/overrides', '/limits/{limitId}/overrides/{selector}']) assert.ok(doc.body.paths[p], p);
    assert.deepEqual(Object.keys(doc.body.paths['/limits/{limitId}/overrides/{selector}']).sort(), ['delete', 'get', 'parameters', 'put']);
    assert.ok(doc.body.components.schemas.StoredOverride);
  });
});

describe('admin API: overrides when the store fails', () => {
  it("logs the failure without the selector: it may be a client's address or a header value", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-overrides-log-'));
    const store = new EmbeddedRuleStore({ dataDir: dir });
    const cache = new RuleCache({ store, defaultRule: { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 }, logger: silentLogger });
    await cache.start();
    const engine = new StoreEngine(new MemoryStore());
    const lines: string[] = [];
    const keep = (details: object, message: string): void => void lines.push(`${message} ${JSON.stringify(details)}`);
    const admin = await startAdminServer({ listen: { port: 0 }, token: TOKEN, store, cache, engine, logger: { info: keep, warn: keep, error: keep } });
    try {
      await store.close(); // every later read or write fails: a 500, logged
      const reply = await fetch(`${admin.url}/limits/per-user/overrides/header:carol-secret`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify(more),
      });
      assert.equal(reply.status, 500);
      assert.ok(lines.some((line) => line.includes('/limits/per-user/overrides/…')), lines.join('\n'));
      assert.ok(!lines.join('\n').includes('carol-secret'), lines.join('\n'));
    } finally {
      await admin.close();
      await cache.close();
      await engine.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('sluice overrides', () => {
  it('sets with options or JSON, lists and deletes; a header value is hashed before it is sent', async () => {
    assert.equal((await cli(['set', 'login-per-ip', 'ip:198.51.100.0/24', '--policy', 'fixed_window', '--limit', '50', '--window-ms', '1000'])).code, 0);
    assert.deepEqual((await f.store.overrides.get('login-per-ip', 'ip:198.51.100.0/24'))?.rule, { policy: 'fixed_window', limit: 50, windowMs: 1000 });
    const set = await cli(['set', 'per-user', 'header:bob', JSON.stringify(more)]);
    assert.equal(set.code, 0);
    assert.ok(set.out.includes(headerBucketId('bob')) && !set.out.includes('bob:'), set.out);
    const listed = await cli(['list']);
    assert.equal(listed.out.trim().split('\n').length, 2);
    assert.equal((await cli(['list', 'per-user', '--json'])).out.includes(headerBucketId('bob')), true);
    assert.equal((await cli(['delete', 'login-per-ip', 'ip:198.51.100.0/24'])).code, 0);
    assert.equal((await cli(['delete', 'per-user', 'header:bob'])).code, 0);
    assert.deepEqual(await f.store.overrides.list(), []);
  });

  it('stops a bad selector before calling the API, with the usage', async () => {
    const bad = await cli(['set', 'login-per-ip', 'ip:10.1.2.3/8', JSON.stringify(more)]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /SELECTOR .*did you mean 10\.0\.0\.0\/8/);
  });
});
