// Sentinel from the config file and the environment: a real sentinel that
// needs a password of its own, a master reached as the documented ACL user.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { parseConfig } from '../../../src/decision-service/load-config.js';
import { checkConnections } from '../../../src/cli/check-connect.js';
import { bucketKey } from '../../../src/core/ids.js';
import { parseRule } from '../../../src/policies/rule.js';
import { redisTargetOf } from '../../../src/config/redis-target.js';
import { connectRedis } from '../../../src/stores/redis/connect.js';
import { RedisStore } from '../../../src/stores/redis-store.js';
import { freePort } from '../../helpers/ports.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { documentedAcl, ROUTES } from '../../helpers/connections.js';

const MASTER_PASSWORD = 'master-secret-93b1';
const SENTINEL_PASSWORD = 'sentinel-secret-0c77';

describe('Sentinel from SLUICE_REDIS_SENTINELS / SLUICE_REDIS_SENTINEL_NAME, with passwords', () => {
  let master: RedisServer;
  let admin: Redis;
  let sentinel: ChildProcess;
  let sentinelPort: number;
  let dir: string;

  /** The file names the sentinels' password file; the environment names the sentinels, the master and the ACL user. */
  const config = (sentinelPasswordFile: string, env: Record<string, string> = {}) =>
    parseConfig(`${ROUTES}store:\n  sentinel:\n    passwordFile: ${sentinelPasswordFile}\n`, {
      baseDir: dir,
      env: { SLUICE_REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`, SLUICE_REDIS_SENTINEL_NAME: 'sluice-master', SLUICE_REDIS_USERNAME: 'sluice', SLUICE_REDIS_PASSWORD: MASTER_PASSWORD, ...env },
    });

  before(async () => {
    master = await startRedis();
    admin = master.client();
    await admin.call('ACL', ...documentedAcl(MASTER_PASSWORD));
    await admin.call('ACL', 'LOG', 'RESET');
    dir = mkdtempSync(join(tmpdir(), 'sluice-sentinel-config-'));
    writeFileSync(join(dir, 'sentinel-password'), SENTINEL_PASSWORD);
    writeFileSync(join(dir, 'wrong-sentinel-password'), 'not-it');
    sentinelPort = await freePort();
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(conf, `port ${sentinelPort}\nbind 127.0.0.1\ndir ${dir}\nrequirepass ${SENTINEL_PASSWORD}\nsentinel monitor sluice-master 127.0.0.1 ${master.port} 1\nsentinel down-after-milliseconds sluice-master 1000\n`);
    sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    await untilAnswers(sentinelPort, SENTINEL_PASSWORD);
  });
  after(async () => {
    admin?.disconnect();
    sentinel?.kill('SIGKILL');
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the variables make a Sentinel store, merged with the file’s sentinel password, and decisions land on the master', async () => {
    const { store } = config('sentinel-password');
    assert.equal(store.type, 'redis');
    const redis = new RedisStore(connectRedis(redisTargetOf(store)!));
    try {
      const rule = parseRule({ policy: 'token_bucket', capacity: 2, refillPerSecond: 0.001 });
      const key = bucketKey('sentinel-conf-tenant', 'orders');
      const decisions = [await redis.consume(key, rule, 1), await redis.consume(key, rule, 1), await redis.consume(key, rule, 1)];
      assert.deepEqual(decisions.map((d) => d.allowed), [true, true, false]);
    } finally {
      await redis.close();
    }
    assert.deepEqual(await admin.hkeys('rl:{sentinel-conf-tenant}'), ['orders'], 'the bucket is on the monitored master');
    assert.deepEqual(await admin.call('ACL', 'LOG'), [], 'the ACL user was enough behind Sentinel too');
  });

  it('check --connect names a refused sentinel password and a refused master password apart', async () => {
    const [ok] = await checkConnections(config('sentinel-password'), 5000);
    assert.equal(ok!.problem, undefined);
    assert.equal(ok!.target, `redis sentinel master sluice-master via 127.0.0.1:${sentinelPort} (user sluice)`);
    const [sentinelRefused] = await checkConnections(config('wrong-sentinel-password'), 5000);
    assert.match(sentinelRefused!.problem ?? '', /^the sentinels refused or could not be reached .*WRONGPASS.*; check store\.sentinel/);
    const [masterRefused] = await checkConnections(config('sentinel-password', { SLUICE_REDIS_PASSWORD: 'wrong-master-password' }), 5000);
    assert.match(masterRefused!.problem ?? '', /^authentication refused \(WRONGPASS\)/);
    for (const check of [ok, sentinelRefused, masterRefused]) assert.ok(!JSON.stringify(check).includes(SENTINEL_PASSWORD) && !JSON.stringify(check).includes(MASTER_PASSWORD));
  });
});

/** waitForPing for a server that needs a password. */
async function untilAnswers(port: number, password: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const probe = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    const answered = await probe.connect().then(() => probe.ping(), () => undefined).catch(() => undefined);
    probe.disconnect();
    if (answered === 'PONG') return;
    await sleep(50);
  }
  throw new Error(`the sentinel on port ${port} did not answer`);
}
