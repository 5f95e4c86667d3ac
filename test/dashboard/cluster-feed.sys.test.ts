// The cluster feed on a real redis-server: each instance's snapshot is seen by
// the others, a stopped instance stays listed as gone (not counted), and a dead Redis makes the overview
// say it shows this instance only (never an error page).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { DASHBOARD_KEY } from '../../src/dashboard/cluster-feed.js';
import { Dashboard } from '../../src/dashboard/dashboard.js';
import { EngineObserver } from '../../src/dashboard/engine-observer.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const silent = pino({ level: 'silent' });
const rule = { policy: 'token_bucket', capacity: 1, refillPerSecond: 0.001 } as const;

describe('cluster feed', () => {
  let redis: RedisServer;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it('merges every live instance, lists a stopped one as gone, and falls back to this instance when Redis is gone', async () => {
    const engines = [new StoreEngine(new MemoryStore()), new StoreEngine(new MemoryStore())];
    const [a, b] = engines.map((engine, i) => new Dashboard({ observer: new EngineObserver(engine), redis: { url: redis.url }, logger: silent, instanceId: `inst-${i}` }));
    await engines[0]!.decide({ tag: 't1', name: 'r' }, rule);
    await engines[0]!.decide({ tag: 't1', name: 'r' }, rule);
    await engines[1]!.decide({ tag: 't2', name: 'r' }, rule);
    await engines[1]!.decide({ tag: 't2', name: 'r' }, rule);
    await engines[1]!.decide({ tag: 't2', name: 'r' }, rule);

    let view = await a!.overview();
    // B publishes each second: wait for the snapshot taken after its decisions.
    for (let i = 0; i < 50 && view.top.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      view = await a!.overview();
    }
    assert.equal(view.scope, 'cluster');
    assert.deepEqual(view.instances.map((i) => [i.id, i.self]), [['inst-0', true], ['inst-1', false]]);
    assert.deepEqual(view.top.map((e) => [e.tenant, e.count]), [['t2', 2], ['t1', 1]]);
    assert.equal(view.routes.r!.allowed.reduce((x, y) => x + y, 0), 2);

    await b!.close();
    const afterStop = await a!.overview();
    assert.deepEqual(afterStop.instances.map((i) => [i.id, i.gone]), [['inst-0', undefined], ['inst-1', 'stopped']], 'a stopped instance is listed as gone, not removed');
    assert.ok(afterStop.instances[1]!.stoppedAt! >= afterStop.instances[1]!.startedAt!);
    assert.equal(afterStop.routes.r!.allowed.reduce((x, y) => x + y, 0), 1, "a gone instance's counts leave the live series");
    const client = redis.client();
    assert.deepEqual((await client.hkeys(DASHBOARD_KEY)).sort(), ['inst-0', 'inst-1']);
    assert.ok((await client.pttl(DASHBOARD_KEY)) > 60_000, 'kept for the ten minutes a gone instance stays listed');
    client.disconnect();

    await redis.kill();
    const alone = await a!.overview();
    assert.equal(alone.scope, 'local');
    assert.match(alone.scopeNote ?? '', /cluster view unavailable/);
    assert.deepEqual(alone.instances.map((i) => i.id), ['inst-0']);
    await a!.close();
    await Promise.all(engines.map((e) => e.close()));
  });
});
