// A network partition that is not a crash: Redis is up (other clients are
// served) but nothing passes between it and the gateways, and no connection
// is reset (packets dropped, TCP retransmitting: the delaying proxy holds
// them). It behaves like the pause test: the deadline path, the fallback's
// shares, no waiting once the breaker is open; back on Redis once it heals.
// Counts, never milliseconds.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '../../src/core/decision.js';
import type { ResilientEngine } from '../../src/limiter/engine/resilient-engine.js';
import { connectRedis } from '../../src/stores/redis/connect.js';
import { type DelayProxy, startDelayProxy } from '../helpers/delay-proxy.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { allowedCount, bucket, burst, eventually, resilientEngine } from '../helpers/resilient-engine.js';

let redis: RedisServer;
let proxy: DelayProxy;
before(async () => {
  redis = await startRedis();
  proxy = await startDelayProxy({ targetPort: redis.port, toServer: { ms: 0 }, toClient: { ms: 0 } });
});
after(async () => {
  await proxy?.heal().catch(() => undefined);
  await proxy?.close();
  await redis?.stop();
});

test('Redis partitioned away (held, not reset) under load: the deadline path and the fallback shares, then back on Redis when it heals', async () => {
  const clients = [0, 1].map(() => connectRedis({ url: `redis://127.0.0.1:${proxy.port}` }));
  for (const client of clients) client.on('error', () => undefined);
  const engines: ResilientEngine[] = clients.map((client, i) =>
    resilientEngine({ redis: client, deadlineMs: 5, heartbeatMs: 100, memberTtlMs: 1000, instanceId: `partition-${i}`, breaker: { resetTimeoutMs: 300 } }),
  );
  const admin = redis.client();
  try {
    await eventually(() => engines.every((engine) => engine.instances === 2), 5000, 'both instances counted');
    let running = true;
    const decisions: Decision[] = [];
    const load = (async () => {
      while (running) {
        decisions.push(...(await Promise.all(engines.flatMap((engine) => Array.from({ length: 20 }, () => engine.decide({ tag: 'loaded', name: 'orders' }, bucket(1000, 100)))))));
        await sleep(2);
      }
    })();
    await sleep(200);
    await proxy.partition();
    await eventually(() => engines.every((engine) => engine.health().mode === 'fallback'), 5000, 'fallback mode');
    running = false;
    await load; // rejects if any decision threw
    assert.equal(await admin.ping(), 'PONG', 'Redis itself is up: a partition, not a crash');
    assert.ok(clients.every((client) => client.status === 'ready'), 'no connection was reset or closed');
    assert.ok(decisions.some((d) => d.source === 'redis') && decisions.some((d) => d.source === 'fallback'));
    for (const engine of engines) assert.ok(engine.counters().deadlineTimeouts > 0, 'the partition was seen as deadline timeouts');
    // A key first seen during the partition: each instance admits its half of capacity 20 (± refill).
    for (const engine of engines) {
      const partitioned = await burst(engine, 100, bucket(20, 1), 'partitioned-new');
      const allowed = allowedCount(partitioned);
      assert.ok(allowed >= 10 && allowed <= 11, `one instance admitted ${allowed} of a fallback share of 10`);
      assert.ok(partitioned.every((d) => d.source === 'fallback'));
    }
    await proxy.heal();
    await eventually(async () => (await engines[0]!.decide({ tag: 'after', name: 'partition' }, bucket(20, 1))).source === 'redis', 5000, 'redis decisions again');
    assert.equal(engines[0]!.health().mode, 'redis');
  } finally {
    await proxy.heal();
    await Promise.all(engines.map((engine) => engine.close()));
    for (const client of clients) client.disconnect();
    admin.disconnect();
  }
});
