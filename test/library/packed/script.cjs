// The plain script as CommonJS, on a RedisStore over connectRedis: close() ends it.
const { connectRedis, createLimiter, RedisStore } = require('sluice');

const client = connectRedis({ url: process.argv[2] });
client.on('error', () => undefined);
const limiter = createLimiter({ id: 'api', policy: 'token_bucket', capacity: 2, refillPerSecond: 0.001 }, new RedisStore(client));
(async () => {
  const decisions = [];
  for (const key of ['user-42', 'user-42', 'user-42', 'org:42']) decisions.push(await limiter.consume(key));
  await limiter.close();
  process.stdout.write(`${JSON.stringify(decisions.map((d) => [d.allowed, d.source]))}\n`);
})();
