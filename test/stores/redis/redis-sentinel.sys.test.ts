// RedisStore through Redis Sentinel: the client asks a real sentinel (a
// redis-server in sentinel mode, started here) where the master is.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { bucketKey } from '../../../src/core/ids.js';
import { parseRule } from '../../../src/policies/rule.js';
import { RedisStore } from '../../../src/stores/redis-store.js';
import { connectRedis } from '../../../src/stores/redis/connect.js';
import { freePort } from '../../helpers/ports.js';
import { type RedisServer, startRedis, waitForPing } from '../../helpers/redis-server.js';

describe('RedisStore through Sentinel', () => {
  let master: RedisServer;
  let sentinel: ChildProcess;
  let dir: string;
  let store: RedisStore;
  let admin: Redis;

  before(async () => {
    master = await startRedis();
    admin = master.client();
    dir = mkdtempSync(join(tmpdir(), 'sluice-sentinel-'));
    const port = await freePort();
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor sluice 127.0.0.1 ${master.port} 1\nsentinel down-after-milliseconds sluice 1000\n`);
    sentinel = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    await waitForPing(port);
    store = new RedisStore(connectRedis({ sentinel: { name: 'sluice', sentinels: [`127.0.0.1:${port}`] } }));
  });
  after(async () => {
    await store?.close();
    admin?.disconnect();
    sentinel?.kill('SIGKILL');
    await master?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds the master through the sentinel and decides there', async () => {
    const rule = parseRule({ policy: 'token_bucket', capacity: 2, refillPerSecond: 0.001 });
    const key = bucketKey('sentinel-tenant', 'create-order');
    const decisions = [await store.consume(key, rule, 1), await store.consume(key, rule, 1), await store.consume(key, rule, 1)];
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, false]);
    assert.deepEqual(await admin.hkeys('rl:{sentinel-tenant}'), ['create-order'], 'the bucket is on the monitored master');
  });
});
