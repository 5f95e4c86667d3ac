// The delaying proxy in front of a real redis-server: every byte passes, in
// order, both ways; a round trip takes at least the two one-way delays.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { type DelayProxy, startDelayProxy } from './delay-proxy.js';
import { type RedisServer, startRedis } from './redis-server.js';

describe('delay proxy', () => {
  let server: RedisServer;
  let proxy: DelayProxy;
  let client: Redis;

  before(async () => {
    server = await startRedis();
    proxy = await startDelayProxy({ targetPort: server.port, toServer: { ms: 3, jitterMs: 2 }, toClient: { ms: 3, jitterMs: 2 } });
    client = new Redis({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 1 });
  });
  after(async () => {
    client?.disconnect();
    await proxy?.close();
    await server?.stop();
  });

  it('passes a pipeline of 1,000 commands and their replies in order, however the jitter falls', async () => {
    const pipeline = client.pipeline();
    for (let i = 0; i < 1000; i++) pipeline.set(`proxy:${i}`, `value-${i}`).get(`proxy:${i}`);
    const replies = (await pipeline.exec())!.map(([error, value]) => (error ? String(error) : value));
    assert.deepEqual(replies, Array.from({ length: 1000 }, (_, i) => ['OK', `value-${i}`]).flat());
  });

  it('a round trip takes at least the two one-way delays, and a spike its length more', async () => {
    await proxy.setDelays({ ms: 10 }, { ms: 15 });
    const started = performance.now();
    assert.equal(await client.ping(), 'PONG');
    // A lower bound only: the proxy holds each chunk at least its delay, however busy the machine.
    assert.ok(performance.now() - started >= 25, `round trip ${performance.now() - started} ms`);
    await proxy.setDelays({ ms: 0 }, { ms: 0, spike: { ms: 30, probability: 1 } });
    const spiked = performance.now();
    assert.equal(await client.ping(), 'PONG');
    assert.ok(performance.now() - spiked >= 30, `spiked round trip ${performance.now() - spiked} ms`);
    await proxy.setDelays({ ms: 0 }, { ms: 0 });
  });

  it('a server that closes the connection closes the client’s, through the proxy', async () => {
    const own = new Redis({ host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
    const closed = new Promise<void>((resolve) => own.once('end', () => resolve()));
    own.on('error', () => undefined);
    await own.ping();
    // Every other client (own included) is closed by the server; the proxy must pass the close on.
    await client.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await closed;
  });
});
