// Redis as managed services run it: TLS with a private CA and client
// certificates (tls-auth-clients yes), and an ACL user holding exactly the ACL
// docs/redis.md documents. The certificates are made here with openssl; the
// redis-server is real. Every wrong setting is named by `sluice check
// --connect` and by /readyz, and the password shows up nowhere.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { type RunningSluice, startSluice } from '../../../src/app.js';
import { checkConnections } from '../../../src/cli/check-connect.js';
import { redisTargetOf } from '../../../src/config/redis-target.js';
import { connectRedis } from '../../../src/stores/redis/connect.js';
import { RedisStore } from '../../../src/stores/redis-store.js';
import { storeSuite } from '../store-suite.js';
import { call, startUpstream, type TestUpstream } from '../../helpers/gateway-support.js';
import { freePort } from '../../helpers/ports.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { makeCertificates, type TestCertificates } from '../../helpers/tls-certs.js';
import { checkConnect, configIn, documentedAcl, ROUTES } from '../../helpers/connections.js';

const PASSWORD = 'n0t-in-any-log-7f3a9c';
const ADMIN_TOKEN = 'connections-admin-token-0123456789';

describe('Redis over TLS with the documented ACL user', () => {
  let certs: TestCertificates;
  let server: RedisServer;
  let admin: Redis;
  let tlsPort: number;
  let store: RedisStore;

  /** The store section of a config, TLS and credentials from files in the certificates' folder; `change` replaces lines. */
  const storeYaml = (change: Record<string, string> = {}) => {
    const fields: Record<string, string> = {
      url: `redis://127.0.0.1:${tlsPort}`,
      username: 'sluice',
      passwordFile: 'password.txt',
      tls: '{ ca: ca.pem, cert: client.pem, key: client.key, servername: redis.sluice.test }',
      ...change,
    };
    return `store:\n${Object.entries(fields).filter(([, value]) => value !== '').map(([key, value]) => `  ${key}: ${value}`).join('\n')}\n`;
  };
  const configWith = (change: Record<string, string> = {}) => configIn(certs.dir, `${ROUTES}${storeYaml(change)}`);

  before(async () => {
    certs = makeCertificates();
    writeFileSync(join(certs.dir, 'password.txt'), `${PASSWORD}\n`);
    writeFileSync(join(certs.dir, 'wrong-password.txt'), 'not-the-password\n');
    tlsPort = await freePort();
    // The plain port (default user, no password) is the test's own; Sluice gets the TLS port.
    server = await startRedis(['--tls-port', String(tlsPort), '--tls-cert-file', certs.serverCert, '--tls-key-file', certs.serverKey, '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'yes']);
    admin = server.client();
    await admin.call('ACL', ...documentedAcl(PASSWORD));
    await admin.call('ACL', 'LOG', 'RESET');
    store = new RedisStore(connectRedis(redisTargetOf(configWith().store)!));
  });
  after(async () => {
    await store?.close();
    admin?.disconnect();
    await server?.stop();
    certs?.remove();
  });

  describe('every store call of every policy, over TLS as the ACL user', () => {
    storeSuite(() => store);
  });

  it('the whole gateway (several limits, leases, membership, dashboard, bucket inspect and reset, penalty blocks, tenant usage) runs on the ACL user without one refusal', async () => {
    const upstream = await startUpstream();
    // A fixed, generous deadline: this test proves the ACL user's permissions, not
    // latency, and a loaded machine's TLS round trip can outlast the adaptive one.
    const app = await startWith(configIn(certs.dir, `${gatewayRoutes(upstream)}${storeYaml({ deadlineMs: '2000' })}dataDir: ${join(certs.dir, 'data')}\nadmin: { listen: "127.0.0.1:0", token: ${ADMIN_TOKEN} }\nresilience: { heartbeatMs: 100, memberTtlMs: 300 }\n`));
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await call(`${app.url}/orders`, { headers: { 'x-api-key': 'tls-tenant-key-1' } })).status);
      for (let i = 0; i < 3; i++) statuses.push((await call(`${app.url}/leased`, { headers: { 'x-api-key': 'tls-tenant-key-1' } })).status);
      assert.deepEqual(statuses, [200, 200, 200, 429, 200, 200, 200]);
      const counters = app.engine.counters();
      assert.equal(counters.bySource.fallback ?? 0, 0, 'every decision was made on Redis');
      assert.equal(counters.storeErrors, 0);
      assert.ok(counters.leaseCalls > 0, 'the leased route leased');
      const bucket = await fetch(`${app.adminUrl}/buckets/tls-tenant/orders`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(bucket.status, 200);
      assert.match(((await bucket.json()) as { location: string }).location, /^redis 127\.0\.0\.1:/);
      const reset = await fetch(`${app.adminUrl}/buckets/tls-tenant/orders`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.equal(reset.status, 204);
      // The penalty box: a refusal starts a block (its state beside the bucket, the index of blocks), listed and lifted.
      const boxed: number[] = [];
      for (let i = 0; i < 3; i++) boxed.push((await call(`${app.url}/boxed`, { headers: { 'x-api-key': 'tls-tenant-key-1' } })).status);
      assert.deepEqual(boxed, [200, 429, 429]);
      const asAdmin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
      const { blocks } = (await (await fetch(`${app.adminUrl}/blocks`, asAdmin)).json()) as { blocks: { id: string }[] };
      assert.equal(blocks.length, 1);
      assert.equal((await fetch(`${app.adminUrl}/blocks/${blocks[0]!.id}`, { method: 'DELETE', ...asAdmin })).status, 200);
      // Each tenant's usage: written by the recorder (at the latest when the gateway stops), read here.
      assert.equal((await fetch(`${app.adminUrl}/tenants/tls-tenant/usage`, asAdmin)).status, 200);
      // The heartbeat and the dashboard write on their own clock: wait until both wrote.
      while ((await admin.zcard('sluice:{meta}:instances')) === 0 || (await admin.hlen('sluice:{meta}:dashboard')) === 0) await sleep(50);
    } finally {
      await app.close();
      await upstream.close();
    }
    assert.deepEqual(await admin.call('ACL', 'LOG'), [], 'Redis refused nothing the ACL user asked');
    assert.ok((await admin.keys('sluice:usage:{tls-tenant}:*')).length > 0, "the tenant's usage was written");
    assert.ok((await admin.keys('sluice:notify:*')).length > 0, 'the warning event was claimed for the cluster');
  });

  it('the ACL user can do nothing beyond it: no FLUSHALL, no key outside rl:* and sluice:{meta}:*', async () => {
    const client = store.client as Redis;
    await assert.rejects(client.flushall(), /NOPERM/);
    await assert.rejects(client.get('other:key'), /NOPERM/);
    await assert.rejects(client.call('CONFIG', 'GET', 'requirepass'), /NOPERM/);
  });

  it('each wrong setting is named by check --connect, never with the password', async () => {
    await admin.call('ACL', 'SETUSER', 'narrow', 'on', `>${PASSWORD}`, '~rl:*', '-@all', '+info', '+evalsha', '+eval', '+script|load');
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /^$/],
      [{ passwordFile: 'wrong-password.txt' }, /^authentication refused \(WRONGPASS\): wrong password, unknown ACL user/],
      [{ username: 'nobody' }, /^authentication refused \(WRONGPASS\)/],
      [{ username: 'narrow' }, /^the ACL user may not do what Sluice needs \((NOPERM|ERR The user executing the script can't run) .*\); grant the ACL of docs\/redis.md/],
      [{ tls: '{ ca: other-ca.pem, cert: client.pem, key: client.key }' }, /^TLS handshake failed \(SELF_SIGNED_CERT_IN_CHAIN\)/],
      [{ tls: '{ ca: ca.pem, cert: client.pem, key: client.key, servername: elsewhere.example }' }, /^TLS handshake failed \(ERR_TLS_CERT_ALTNAME_INVALID\)/],
      [{ tls: '{ ca: ca.pem }' }, /^(TLS handshake failed|connection reset by Redis)/],
      [{ tls: '' }, /^connection reset by Redis \(ECONNRESET\): a TLS port reached without store.tls/],
    ];
    for (const [change, expected] of cases) {
      const [check] = await checkConnections(configWith(change), 5000);
      assert.match(check!.problem ?? '', expected, JSON.stringify(change));
      assert.ok(!check!.target.includes(PASSWORD) && !(check!.problem ?? '').includes(PASSWORD));
    }
  });

  it('sluice check --connect exits 1 naming the refused password, and 0 once the config is right', async () => {
    const wrong = await checkConnect(certs.dir, `${ROUTES}${storeYaml({ passwordFile: 'wrong-password.txt' })}`);
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, new RegExp(`^redis 127\\.0\\.0\\.1:${tlsPort} \\(tls, user sluice\\): authentication refused \\(WRONGPASS\\)`, 'm'));
    const right = await checkConnect(certs.dir, `${ROUTES}${storeYaml({ passwordFile: '', password: PASSWORD })}`);
    assert.equal(right.code, 0, right.stderr);
    assert.match(right.stdout, new RegExp(`^redis 127\\.0\\.0\\.1:${tlsPort} \\(tls, user sluice\\): ok$`, 'm'));
    for (const output of [wrong.stdout, wrong.stderr, right.stdout, right.stderr]) assert.ok(!output.includes(PASSWORD), output);
  });

  it('a running gateway with a refused password names it in /readyz and its log, keeps serving on the fallback, and never shows the password', async () => {
    const wrongPassword = 'also-secret-4d2e1b';
    writeFileSync(join(certs.dir, 'wrong-password-2.txt'), wrongPassword);
    let logged = '';
    const logger = pino(
      { level: 'debug' },
      {
        write: (line: string) => {
          logged += line;
        },
      },
    );
    const upstream = await startUpstream();
    const app = await startSluice(configIn(certs.dir, `${gatewayRoutes(upstream)}${storeYaml({ passwordFile: 'wrong-password-2.txt' })}dataDir: ${join(certs.dir, 'data-2')}\nadmin: { listen: "127.0.0.1:0", token: ${ADMIN_TOKEN} }\n`), { logger, ruleStore: true, admin: true, shutdownGraceMs: 1000 });
    try {
      let ready: { engine: { mode: string; storeReachable: boolean; reason?: string } };
      do ready = (await (await fetch(`${app.adminUrl}/readyz`)).json()) as typeof ready;
      while (ready.engine.reason === undefined);
      assert.equal(ready.engine.mode, 'fallback');
      assert.equal(ready.engine.storeReachable, false);
      assert.match(ready.engine.reason, /^authentication refused \(WRONGPASS\)/);
      assert.equal((await call(`${app.url}/orders`, { headers: { 'x-api-key': 'tls-tenant-key-1' } })).status, 200, 'served by the fallback');
      assert.match(logged, /"level":50,.*"reason":"authentication refused \(WRONGPASS\)/);
      const metrics = await (await fetch(`${app.adminUrl}/metrics`)).text();
      const readyz = await (await fetch(`${app.adminUrl}/readyz`)).text();
      for (const text of [logged, metrics, readyz]) assert.ok(!text.includes(wrongPassword) && !text.includes(PASSWORD), text);
    } finally {
      await app.close();
      await upstream.close();
    }
  });
});

function gatewayRoutes(upstream: TestUpstream): string {
  return `routes:
  - id: orders
    path: /orders
    upstream: ${upstream.url}
    limits:
      - { id: orders, key: tenant }
      # in the tenant's slot: both limits are one script, and the refused request's buckets are restored
      - { id: orders-per-ip, key: tenant+ip, rule: { policy: sliding_window_log, limit: 100, windowMs: 60000 } }
      - { id: orders-all-ips, key: ip, rule: { policy: fixed_window, limit: 100, windowMs: 60000 } }
  - id: leased
    path: /leased
    upstream: ${upstream.url}
  - id: boxed
    path: /boxed
    upstream: ${upstream.url}
    limits:
      - { id: boxed, key: tenant, rule: { policy: fixed_window, limit: 1, windowMs: 60000 }, penalty: { after: 1, withinMs: 60000, blockMs: 60000 }, notify: { at: [1.0], url: "${upstream.url}/hook", secret: notify-secret-0123456789abcdef } }
tenants:
  keys: [{ key: tls-tenant-key-1, tenant: tls-tenant }]
rules:
  - { tenant: tls-tenant, route: orders, policy: token_bucket, capacity: 3, refillPerSecond: 0.001 }
  - { tenant: tls-tenant, route: leased, policy: token_bucket, capacity: 100, refillPerSecond: 10, lease: { batch: 5 } }
`;
}

function startWith(config: ReturnType<typeof configIn>): Promise<RunningSluice> {
  return startSluice(config, { logger: pino({ level: 'silent' }), ruleStore: true, admin: true, shutdownGraceMs: 1000 });
}
