// Redis faults under load, through real HTTP: two gateway processes' worth of
// gateways on one real redis-server that the test kills, pauses and restarts.
// No client sees a 5xx; while Redis is away each instance holds 1/N of the limit;
// when it returns, decisions come from Redis again within 5 s.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { until } from '../helpers/poll.js';

const yaml = `
routes:
  - { id: create-order, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 20, refillPerSecond: 0.01 }
store: { deadlineMs: 100 }
resilience: { heartbeatMs: 200, memberTtlMs: 3000, breaker: { resetTimeoutMs: 300 } }
`;
// deadlineMs: a paused or dead Redis still takes the deadline path, but a
// redis-server that merely got no CPU for 5 ms on a loaded machine does not: a
// local decision for a key this instance never heard of from Redis admits from
// a full 1/N bucket, and the late reply only charges the excess afterwards.
// memberTtlMs: both gateways share this process, so an event loop stalled for a
// second on a loaded machine silences both; a short TTL would drop the other
// instance from the count (and double this one's fallback share) meanwhile.

async function engineHealth(app: RunningSluice): Promise<{ mode: string; detail?: string }> {
  const reply = await call(`${app.adminUrl}/readyz`);
  return JSON.parse(reply.body).engine;
}
const mode = async (app: RunningSluice) => (await engineHealth(app)).mode;

describe('Redis faults through the gateway', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  const apps: RunningSluice[] = [];
  const dirs: string[] = [];
  let background: Promise<number[]> | undefined;
  let stopLoad = false;

  before(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startUpstream()]);
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-faults-'));
      dirs.push(dir);
      const env = { UPSTREAM: upstream.url, SLUICE_REDIS_URL: redis.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_DATA_DIR: dir };
      apps.push(await startGateway(yaml, env, { ruleStore: true, admin: true }));
    }
    // Background load on one hot tenant across both instances, for the whole file.
    background = (async () => {
      const statuses: number[] = [];
      for (let i = 0; !stopLoad; i++) {
        const app = apps[i % 2]!;
        const reply = await call(`${app.url}/orders`, { method: 'POST', headers: { 'x-api-key': 'load' } });
        statuses.push(reply.status);
      }
      return statuses;
    })();
    await bothSeeTwo();
  });
  after(async () => {
    stopLoad = true;
    await background;
    redis.resume();
    await Promise.allSettled(apps.map((app) => app.close()));
    await Promise.allSettled([redis.stop(), upstream.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function burst(app: RunningSluice, tenant: string, count: number): Promise<number[]> {
    return Promise.all(Array.from({ length: count }, async () => (await call(`${app.url}/orders`, { method: 'POST', headers: { 'x-api-key': tenant } })).status));
  }
  /**
   * Keeps traffic flowing on both instances (the breaker learns from calls) until both are in `wanted` mode.
   * A fresh tenant each round: an exhausted one is refused by the negative cache without a Redis call.
   */
  let probes = 0;
  async function bothIn(wanted: string): Promise<void> {
    await until(async () => {
      const tenant = `probe-${probes++}`;
      await burst(apps[0]!, tenant, 3);
      await burst(apps[1]!, tenant, 3);
      return (await mode(apps[0]!)) === wanted && (await mode(apps[1]!)) === wanted;
    }, `both in ${wanted} mode`, 5000, 25);
  }
  /**
   * Both on Redis, and each has seen the other's heartbeat: the fallback divides
   * the limit by the live count, and while Redis is away it keeps the last one.
   * A restarted Redis starts with an empty member set, so each instance counts
   * only itself until the other's next beat: wait for it before a fault.
   */
  async function bothSeeTwo(): Promise<void> {
    const ready = async (app: RunningSluice) => {
      const health = await engineHealth(app);
      return health.mode === 'redis' && /instances=2\b/.test(health.detail ?? '');
    };
    await until(async () => (await ready(apps[0]!)) && (await ready(apps[1]!)), 'both on redis, two instances', 10_000, 25);
  }
  const allowed = (statuses: number[]) => statuses.filter((s) => s === 200).length;
  const errors = (statuses: number[]) => statuses.filter((s) => s >= 500).length;

  it('Redis killed: no 5xx, each instance holds 1/N of the limit once the breaker is open', async () => {
    await bothSeeTwo();
    await redis.kill();
    await bothIn('fallback');
    const a = await burst(apps[0]!, 'killed', 30);
    const b = await burst(apps[1]!, 'killed', 30);
    assert.equal(errors([...a, ...b]), 0);
    assert.equal(allowed(a), 10, 'capacity 20 over 2 live instances');
    assert.equal(allowed(b), 10);
  });

  it('Redis restarted empty, scripts gone: back to Redis decisions within 5 s, limit shared again', async () => {
    await redis.restart();
    await bothIn('redis');
    const both = [...(await burst(apps[0]!, 'restarted', 30)), ...(await burst(apps[1]!, 'restarted', 30))];
    assert.equal(errors(both), 0);
    assert.equal(allowed(both), 20, 'one cluster-wide limit again');
  });

  it('Redis paused with SIGSTOP: the deadline path, no 5xx, fallback limits, then back on SIGCONT', async () => {
    await burst(apps[0]!, 'paused', 1); // Redis saw this tenant: the fallback starts from its state
    await bothSeeTwo();
    redis.pause();
    try {
      await bothIn('fallback');
      const a = await burst(apps[0]!, 'paused-new', 30);
      const b = await burst(apps[1]!, 'paused-new', 30);
      assert.equal(errors([...a, ...b]), 0);
      assert.equal(allowed(a), 10);
      assert.equal(allowed(b), 10);
    } finally {
      redis.resume();
    }
    await bothIn('redis');
  });

  it('the background load never saw a 5xx through all of it', async () => {
    stopLoad = true;
    const statuses = (await background) ?? [];
    assert.ok(statuses.length > 50, `load ran (${statuses.length} requests)`);
    assert.equal(errors(statuses), 0);
  });
});
