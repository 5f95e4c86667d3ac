// The reference's variables as `sluice ratelimit` reads them: defaults, the
// Redis mapping (single, cluster, sentinel, REDIS_AUTH, REDIS_TLS and its
// files) and the one variable refused by name, the text log format; REDIS_AUTH
// against a real redis-server whose default user is off, and REDIS_TLS with a
// private CA and a client certificate against a real TLS redis-server.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { textLine } from '../../src/decision-service/reference/logger.js';
import { referenceStoreSection, storeSectionOf } from '../../src/decision-service/reference/redis.js';
import { makeCertificates } from '../helpers/tls-certs.js';
import { freePort } from '../helpers/ports.js';
import { referenceSettings } from '../../src/decision-service/reference/settings.js';
import { startRedis } from '../helpers/redis-server.js';
import { startRatelimitProcess, tempDir } from './ratelimit-support.js';
import { descriptor, rlsClient } from '../helpers/decision-service-support.js';

describe('reference settings', () => {
  it('defaults are the reference’s', () => {
    const settings = referenceSettings({});
    assert.equal(settings.configDir, '/srv/runtime_data/current/config');
    assert.deepEqual([settings.grpc, settings.http, settings.debug], [{ host: '0.0.0.0', port: 8081 }, { host: '0.0.0.0', port: 8080 }, { host: '0.0.0.0', port: 6070 }]);
    assert.deepEqual([settings.watchRoot, settings.ignoreDotFiles, settings.mergeDomains, settings.shadowMode, settings.log], [true, false, false, false, { level: 'warn', json: false }]);
    assert.equal(settings.prometheus, undefined);
    assert.equal(settings.store.section, undefined);
    assert.deepEqual(settings.grpcConnectionAge, { maxAgeMs: 86_400_000, graceMs: 3_600_000 });
  });
  it('RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY, LOG_LEVEL in any case, PROMETHEUS_ADDR in Go’s form', () => {
    const settings = referenceSettings({ RUNTIME_ROOT: '/data', RUNTIME_SUBDIRECTORY: 'ratelimit', RUNTIME_APPDIRECTORY: 'cfg', LOG_LEVEL: 'DEBUG', LOG_FORMAT: 'JSON', USE_PROMETHEUS: 'true', PROMETHEUS_ADDR: ':9191' });
    assert.equal(settings.configDir, '/data/ratelimit/cfg');
    assert.deepEqual(settings.log, { level: 'debug', json: true });
    assert.deepEqual(settings.prometheus, { listen: { host: '0.0.0.0', port: 9191 }, path: '/metrics', responseTimeMs: false });
  });
  it('xDS variables without CONFIG_TYPE=GRPC_XDS_SOTW are ignored, named', () => {
    assert.deepEqual(referenceSettings({ CONFIG_GRPC_XDS_SERVER_URL: 'localhost:18000' }).ignored, [{ variable: 'CONFIG_GRPC_XDS_SERVER_URL', reason: 'read only with CONFIG_TYPE=GRPC_XDS_SOTW' }]);
    const xds = referenceSettings({ CONFIG_TYPE: 'grpc_xds_sotw', CONFIG_GRPC_XDS_SERVER_URL: 'cp:18000', CONFIG_GRPC_XDS_NODE_METADATA: 'a:1,b=2', XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '1m30s', CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: 'x-token:t' }).xds;
    assert.deepEqual(xds, { serverUrl: 'cp:18000', nodeId: 'default', nodeMetadata: { a: '1', b: '2' }, headers: { 'x-token': 't' }, initialBackoffMs: 90_000, maxBackoffMs: 90_000, tls: undefined });
    assert.throws(() => referenceSettings({ CONFIG_TYPE: 'GRPC_XDS_SOTW', XDS_CLIENT_BACKOFF_MAX_INTERVAL: 'soon' }), /XDS_CLIENT_BACKOFF_MAX_INTERVAL: must be a duration such as 10s or 500ms, not "soon"/);
    assert.throws(() => referenceSettings({ CONFIG_TYPE: 'GRPC_XDS_SOTW', CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true', CONFIG_GRPC_XDS_SERVER_TLS_CACERT: '/nowhere/ca.pem' }), /^ConfigError: CONFIG_GRPC_XDS_SERVER_TLS_CACERT: cannot read \/nowhere\/ca\.pem: ENOENT$/);
    assert.throws(() => referenceSettings({ CONFIG_TYPE: 'consul' }), /CONFIG_TYPE: must be FILE or GRPC_XDS_SOTW, not "consul"/);
    assert.deepEqual(referenceSettings({ CONFIG_TYPE: 'GRPC_XDS_SOTW', XDS_CLIENT_BACKOFF_JITTER: 'true' }).ignored.map((entry) => entry.variable), ['XDS_CLIENT_BACKOFF_JITTER']);
    assert.deepEqual(referenceSettings({ DOG_STATSD_MOGRIFIER_HITS_PATTERN: '^x$' }).ignored.map((entry) => entry.variable), ['DOG_STATSD_MOGRIFIER_HITS_PATTERN']);
  });
  it('GRPC_SERVER_USE_TLS needs its certificate and key', () => {
    assert.throws(() => referenceSettings({ GRPC_SERVER_USE_TLS: 'true', GRPC_SERVER_TLS_KEY: '/k' }), /GRPC_SERVER_TLS_CERT: is required with GRPC_SERVER_USE_TLS=true/);
  });
});

describe('the Redis variables', () => {
  const store = (env: Record<string, string>) => storeSectionOf(referenceStoreSection(env));
  it('single: host:port, REDIS_AUTH as password or user:password (the store\'s username and password, never in the URL), REDIS_TLS as rediss://', () => {
    assert.deepEqual(store({ REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: 'redis.svc:6379' }), { url: 'redis://redis.svc:6379' });
    assert.deepEqual(store({ REDIS_URL: 'redis.svc:6379', REDIS_AUTH: 'p@ss:word' }), { url: 'redis://redis.svc:6379', username: 'p@ss', password: 'word' });
    assert.deepEqual(store({ REDIS_URL: 'redis.svc:6379', REDIS_AUTH: 'pass/word' }), { url: 'redis://redis.svc:6379', password: 'pass/word' });
    assert.deepEqual(store({ REDIS_URL: 'redis.svc:6379', REDIS_TLS: 'true' }), { url: 'rediss://redis.svc:6379', tls: {} });
  });
  it('cluster: the seed nodes', () => {
    assert.deepEqual(store({ REDIS_TYPE: 'CLUSTER', REDIS_URL: 'a:7000, b:7001' }), { cluster: ['a:7000', 'b:7001'] });
    assert.throws(() => store({ REDIS_TYPE: 'cluster', REDIS_URL: 'a:7000,nope' }), /REDIS_URL: "nope" must be host:port/);
  });
  it('the full mapping has sentinel, TLS files and sentinel auth in the store’s connection fields', () => {
    const mapped = referenceStoreSection({ REDIS_TYPE: 'sentinel', REDIS_URL: 'mymaster,s1:26379,s2:26379', REDIS_AUTH: 'u:p', REDIS_SENTINEL_AUTH: 'sp', REDIS_TLS: 'true', REDIS_TLS_CACERT: '/ca.pem' });
    assert.deepEqual(mapped.section, { username: 'u', password: 'p', tls: { ca: '/ca.pem' }, sentinel: { name: 'mymaster', sentinels: ['s1:26379', 's2:26379'], password: 'sp' } });
  });
  it('sentinel, TLS files, ACL users and cluster credentials go to the store as they are', () => {
    assert.deepEqual(store({ REDIS_TYPE: 'sentinel', REDIS_URL: 'mymaster,s1:26379' }), { sentinel: { name: 'mymaster', sentinels: ['s1:26379'] } });
    assert.deepEqual(store({ REDIS_URL: 'r:6379', REDIS_TLS: 'true', REDIS_TLS_CACERT: '/ca.pem', REDIS_TLS_CLIENT_CERT: '/c.pem', REDIS_TLS_CLIENT_KEY: '/c.key' }), { url: 'rediss://r:6379', tls: { ca: '/ca.pem', cert: '/c.pem', key: '/c.key' } });
    assert.deepEqual(store({ REDIS_TYPE: 'cluster', REDIS_URL: 'a:7000', REDIS_AUTH: 'user:p', REDIS_TLS: 'true' }), { cluster: ['a:7000'], username: 'user', password: 'p', tls: {} });
  });
  it('what no store option expresses is refused by variable, never connected without', () => {
    assert.throws(() => store({ REDIS_URL: 'r:6379', REDIS_TLS: 'true', REDIS_TLS_SKIP_HOSTNAME_VERIFICATION: 'true' }), /REDIS_TLS_SKIP_HOSTNAME_VERIFICATION: skipping only the hostname check is not offered/);
    assert.throws(() => store({ REDIS_TYPE: 'sentinel', REDIS_URL: 'mymaster' }), /REDIS_URL: with REDIS_TYPE=sentinel: the master name, then host:port sentinels/);
  });
});

describe('LOG_FORMAT=text: logrus’s lines', () => {
  it('time, level, msg, then the fields; values with spaces quoted', () => {
    const line = textLine(JSON.stringify({ level: 40, time: Date.UTC(2026, 11, 1), pid: 1, hostname: 'h', name: 'sluice', msg: 'USE_STATSD is not used', variable: 'USE_STATSD' }));
    assert.equal(line, 'time=2026-12-01T00:00:00.000Z level=warning msg="USE_STATSD is not used" variable=USE_STATSD\n');
  });
});

describe('REDIS_AUTH against a real Redis (the default user off, an ACL user for Sluice)', () => {
  const root = tempDir('sluice-ratelimit-redis-');
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'shop.yaml'), 'domain: shop\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: minute, requests_per_unit: 1 }\n');
  const cleanup: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
    rmSync(root, { recursive: true, force: true });
  });

  it('decides on Redis as that user; the password is in no log line', async () => {
    const redis = await startRedis();
    cleanup.push(() => redis.stop());
    const admin = redis.client();
    await admin.call('ACL', 'SETUSER', 'sluice', 'on', '>s3cret:pass/word', '~*', '+@all');
    await admin.call('ACL', 'SETUSER', 'default', 'off');
    admin.disconnect();
    const service = await startRatelimitProcess({ RUNTIME_ROOT: root, REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: `127.0.0.1:${redis.port}`, REDIS_AUTH: 'sluice:s3cret:pass/word' });
    cleanup.push(() => service.stop());
    const client = rlsClient(service.grpc);
    try {
      const codes = [];
      for (let i = 0; i < 2; i++) codes.push((await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'k'])] })).overall_code);
      assert.deepEqual(codes, ['OK', 'OVER_LIMIT']);
    } finally {
      client.close();
    }
    const asSluice = new Redis({ port: redis.port, host: '127.0.0.1', username: 'sluice', password: 's3cret:pass/word' });
    try {
      const keys = await asSluice.keys('*');
      assert.ok(keys.some((key) => key.includes('~rls.')), `the bucket is in Redis: ${keys.join(', ')}`);
    } finally {
      asSluice.disconnect();
    }
    assert.ok(!JSON.stringify(service.logs).includes('s3cret') && !service.stderr().includes('s3cret'));
  });
});

describe('REDIS_TLS with a private CA and a client certificate against a real TLS Redis', () => {
  const root = tempDir('sluice-ratelimit-redis-tls-');
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'shop.yaml'), 'domain: shop\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: minute, requests_per_unit: 1 }\n');
  const certs = makeCertificates();
  after(() => {
    certs.remove();
    rmSync(root, { recursive: true, force: true });
  });

  it('decides on Redis over mutual TLS, the store built from the reference variables alone', async () => {
    const tlsPort = await freePort();
    const redis = await startRedis(['--tls-port', String(tlsPort), '--tls-cert-file', certs.serverCert, '--tls-key-file', certs.serverKey, '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'yes']);
    const service = await startRatelimitProcess({
      RUNTIME_ROOT: root,
      REDIS_URL: `127.0.0.1:${tlsPort}`,
      REDIS_TLS: 'true',
      REDIS_TLS_CACERT: certs.ca,
      REDIS_TLS_CLIENT_CERT: certs.clientCert,
      REDIS_TLS_CLIENT_KEY: certs.clientKey,
    });
    const client = rlsClient(service.grpc);
    try {
      const codes = [];
      for (let i = 0; i < 2; i++) codes.push((await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'k'])] })).overall_code);
      assert.deepEqual(codes, ['OK', 'OVER_LIMIT']);
      const plain = redis.client();
      try {
        assert.ok((await plain.keys('*')).some((key) => key.includes('~rls.')), 'the bucket is in the TLS Redis');
      } finally {
        plain.disconnect();
      }
    } finally {
      client.close();
      await service.stop();
      await redis.stop();
    }
  });
});

describe('GRPC_MAX_CONNECTION_AGE: a gRPC connection is told to go away once it is that old', () => {
  const root = tempDir('sluice-ratelimit-age-');
  mkdirSync(join(root, 'config'));
  after(() => rmSync(root, { recursive: true, force: true }));

  it('the server sends GOAWAY to a connection older than the age', async () => {
    const service = await startRatelimitProcess({ RUNTIME_ROOT: root, GRPC_MAX_CONNECTION_AGE: '300ms', GRPC_MAX_CONNECTION_AGE_GRACE: '100ms' });
    const session = connect(`http://${service.grpc}`);
    try {
      const wentAway = new Promise<string>((done) => session.once('goaway', () => done('goaway')));
      const gaveUp = new Promise<string>((done) => setTimeout(() => done('no goaway within 20 s'), 20_000).unref());
      assert.equal(await Promise.race([wentAway, gaveUp]), 'goaway');
    } finally {
      session.destroy();
      await service.stop();
    }
  });
});
