// A limit's penalty box through the real gateway over real HTTP, on the memory
// store and on a real redis-server: the refusal that reaches `after` blocks the
// key (429 blocked, Retry-After to the block's end); a blocked request charges
// no bucket, its own or the route's other limits; the admin API lists the
// block (hashed) and lifts it, audited; a repeat offence blocks `backoff`
// times longer; on Redis a second gateway instance sees the block at once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, type Reply, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const TOKEN = 'penalty-box-admin-token-0123456789';
const ACME = { 'x-api-key': 'key-acme-penalty-0001' };
const BETA = { 'x-api-key': 'key-beta-penalty-0001' };
const GAMMA = { 'x-api-key': 'key-gamma-penalty-001' };

// login: capacity 3 (refilled in 3000 s), blocked for an hour after 2 refusals.
// quick: capacity 1 refilled in 200 ms, blocked 1 s after 1 refusal, doubled on a repeat.
const YAML = `
globalLimits:
  - { id: all, key: tenant, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 0.001 } }
routes:
  - id: login
    path: /login
    upstream: \${UP}
    limits:
      - id: login
        key: tenant
        rule: { policy: token_bucket, capacity: 3, refillPerSecond: 0.001 }
        penalty: { after: 2, withinMs: 600000, blockMs: 3600000, backoff: 2 }
  - id: quick
    path: /quick
    upstream: \${UP}
    limits:
      - id: quick
        key: tenant
        rule: { policy: token_bucket, capacity: 1, refillPerSecond: 5 }
        penalty: { after: 1, withinMs: 10000, blockMs: 1000, backoff: 2, maxMs: 60000 }
tenants:
  keys:
    - { key: key-acme-penalty-0001, tenant: acme }
    - { key: key-beta-penalty-0001, tenant: beta }
    - { key: key-gamma-penalty-001, tenant: gamma }
headers: { ietf: true }
`;

const bodyOf = (reply: Reply) => JSON.parse(reply.body) as { error: string; retryAfterMs: number; blockedUntilMs?: number };

for (const store of ['memory', 'redis'] as const) {
  describe(`a penalty box through the gateway (${store})`, () => {
    let upstream: TestUpstream;
    let redis: RedisServer | undefined;
    let app: RunningSluice;
    let dir: string;
    let env: Record<string, string>;

    async function admin(method: string, path: string, on: RunningSluice = app) {
      const res = await fetch(`${on.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    }

    before(async () => {
      upstream = await startUpstream();
      dir = mkdtempSync(join(tmpdir(), 'sluice-penalty-'));
      env = { UP: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
      if (store === 'redis') {
        redis = await startRedis();
        env.SLUICE_REDIS_URL = redis.url;
        env.SLUICE_STORE_DEADLINE_MS = '2000';
      }
      app = await startGateway(YAML, env, { ruleStore: true, admin: true });
    });
    after(async () => {
      await app?.close();
      await upstream.close();
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the refusal that reaches `after` blocks the key: 429 blocked, Retry-After to the block end; blocked requests charge nothing; a lift lets it in, audited', async () => {
      for (let i = 0; i < 3; i++) assert.equal((await call(`${app.url}/login`, { headers: ACME })).status, 200);
      const refused = await call(`${app.url}/login`, { headers: ACME });
      assert.equal(refused.status, 429);
      assert.equal(bodyOf(refused).error, 'rate_limited');
      const blocking = await call(`${app.url}/login`, { headers: ACME });
      assert.equal(blocking.status, 429);
      const blockBody = bodyOf(blocking);
      assert.equal(blockBody.error, 'blocked');
      assert.equal(blockBody.retryAfterMs, 3_600_000, 'the block starts with this refusal: its whole length');
      assert.equal(blocking.headers['retry-after'], '3600');
      assert.equal(blocking.headers['x-ratelimit-remaining'], '0');
      assert.equal(blocking.headers['x-ratelimit-reset'], '3600', 'nothing is let in before the block ends');
      assert.ok(blockBody.blockedUntilMs! > Date.now() + 3_500_000);

      // The bucket refilled by an operator: a blocked key still gets nothing, and takes nothing from it.
      assert.equal((await admin('DELETE', '/buckets/acme/login')).status, 204);
      for (let i = 0; i < 4; i++) {
        const blocked = await call(`${app.url}/login`, { headers: ACME });
        assert.equal(blocked.status, 429);
        assert.equal(bodyOf(blocked).error, 'blocked');
        assert.equal(bodyOf(blocked).blockedUntilMs, blockBody.blockedUntilMs);
        assert.ok(Number(blocked.headers['retry-after']) <= 3600 && Number(blocked.headers['retry-after']) > 3000);
      }

      const listed = await admin('GET', '/blocks');
      assert.equal(listed.status, 200);
      const mine = listed.body.blocks.filter((b: { tenant?: string }) => b.tenant === 'acme');
      assert.equal(mine.length, 1);
      assert.match(mine[0].id, /^~h\.[0-9a-f]{32}$/);
      assert.equal(mine[0].limit, 'login');
      assert.equal(mine[0].blockedUntilMs, blockBody.blockedUntilMs);
      assert.ok(mine[0].remainingMs > 3_000_000 && mine[0].remainingMs <= 3_600_000);
      assert.ok(!JSON.stringify(listed.body).includes('pb:'), 'no raw key');

      const lifted = await admin('DELETE', `/blocks/${encodeURIComponent(mine[0].id)}`);
      assert.equal(lifted.status, 200);
      assert.equal(lifted.body.lifted.id, mine[0].id);
      assert.equal((await admin('DELETE', `/blocks/${encodeURIComponent(mine[0].id)}`)).status, 404, 'lifted already');

      const back = await call(`${app.url}/login`, { headers: ACME });
      assert.equal(back.status, 200);
      assert.equal(back.headers['x-ratelimit-remaining'], '2', 'the four blocked requests took nothing from the refilled bucket');
      // The global limit took only the admitted requests (3 + 1), none of the refused or blocked ones.
      assert.match(String(back.headers.ratelimit), /"all";r=96;/);

      const audit = await admin('GET', '/audit?kind=bucket');
      const entry = audit.body.entries.find((e: { action: string }) => e.action === 'DELETE /blocks/{id}');
      assert.ok(entry, 'the lift is in the audit log');
      assert.equal(entry.target, mine[0].id);
    });

    it('a repeat offence blocks backoff times longer', async () => {
      const first = await call(`${app.url}/quick`, { headers: BETA });
      assert.equal(first.status, 200);
      let blocking = await call(`${app.url}/quick`, { headers: BETA });
      // A refill between the two (a slow machine) admits one more: the next refusal blocks.
      for (let i = 0; blocking.status === 200 && i < 20; i++) blocking = await call(`${app.url}/quick`, { headers: BETA });
      assert.equal(bodyOf(blocking).error, 'blocked');
      assert.equal(bodyOf(blocking).retryAfterMs, 1000);
      // Once the first block ends, the first refusal starts the second: twice as long.
      let second: Reply | undefined;
      for (let i = 0; i < 200 && second === undefined; i++) {
        const reply = await call(`${app.url}/quick`, { headers: BETA });
        if (reply.status === 429 && bodyOf(reply).retryAfterMs > 1000) second = reply;
        else if (reply.status === 429) await sleep(50);
      }
      assert.ok(second, 'a second block started');
      assert.equal(bodyOf(second).error, 'blocked');
      assert.equal(bodyOf(second).retryAfterMs, 2000);
      assert.equal(second.headers['retry-after'], '2');
    });

    it('a bad block id is a 400 naming the field; an unknown one a 404', async () => {
      const bad = await admin('DELETE', '/blocks/pb:%7Bacme%7D:login');
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.field, 'id');
      assert.equal((await admin('GET', '/blocks?limit=0')).body.error.field, 'limit');
      assert.equal((await admin('DELETE', `/blocks/~h.${'0'.repeat(32)}`)).status, 404);
    });

    if (store === 'redis') {
      it('two gateway instances on one Redis agree: a block made on one refuses on the other at once', async () => {
        const otherDir = mkdtempSync(join(tmpdir(), 'sluice-penalty-b-'));
        const other = await startGateway(YAML, { ...env, SLUICE_DATA_DIR: otherDir }, { ruleStore: true, admin: true });
        try {
          for (let i = 0; i < 3; i++) assert.equal((await call(`${app.url}/login`, { headers: GAMMA })).status, 200);
          assert.equal(bodyOf(await call(`${other.url}/login`, { headers: GAMMA })).error, 'rate_limited', 'the second instance refuses: one bucket');
          const blocking = await call(`${app.url}/login`, { headers: GAMMA });
          assert.equal(bodyOf(blocking).error, 'blocked', 'the refusal on the first instance is the second one counted');
          const seen = await call(`${other.url}/login`, { headers: GAMMA });
          assert.equal(seen.status, 429);
          assert.equal(bodyOf(seen).error, 'blocked');
          assert.equal(bodyOf(seen).blockedUntilMs, bodyOf(blocking).blockedUntilMs);
          const ids = (await admin('GET', '/blocks', other)).body.blocks.filter((b: { tenant?: string }) => b.tenant === 'gamma');
          assert.equal(ids.length, 1, 'the other instance lists the block');
        } finally {
          await other.close();
          rmSync(otherDir, { recursive: true, force: true });
        }
      });
    }
  });
}
