// Peer: Fastify + @fastify/http-proxy + @fastify/rate-limit on the same Redis,
// keyed by X-Api-Key, with a limit so large nothing is refused.
import rateLimit from '@fastify/rate-limit';
import httpProxy from '@fastify/http-proxy';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { args, serve } from './serve.js';

const { upstream, redisUrl } = args<{ upstream: string; redisUrl: string }>();

await serve(async () => {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const app = Fastify({ logger: false });
  await app.register(rateLimit, {
    max: 1_000_000_000,
    timeWindow: 1000,
    redis,
    keyGenerator: (req) => String(req.headers['x-api-key'] ?? req.ip),
  });
  await app.register(httpProxy, { upstream, prefix: '/orders', rewritePrefix: '/orders' });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    close: async () => {
      await app.close();
      redis.disconnect();
    },
  };
});
