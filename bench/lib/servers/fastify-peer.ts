// Peer: Fastify + @fastify/http-proxy + @fastify/rate-limit on the same Redis,
// keyed by X-Api-Key, with a limit so large nothing is refused. `tls` serves
// HTTPS with HTTP/2 and HTTP/1.1 by ALPN (Fastify's http2 + https options).
// `limit: false` leaves @fastify/rate-limit out: the peer's own proxy alone.
import rateLimit from '@fastify/rate-limit';
import httpProxy from '@fastify/http-proxy';
import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { args, serve } from './serve.js';

const { upstream, redisUrl, tls, limit = true } = args<{ upstream: string; redisUrl: string; tls?: { cert: string; key: string }; limit?: boolean }>();

await serve(async () => {
  // Without limiting, no Redis connection either: the proxy alone.
  const redis = limit ? new Redis(redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
  // One type for both servers: the plugins below take either.
  const app = (tls ? Fastify({ logger: false, http2: true, https: { allowHTTP1: true, cert: readFileSync(tls.cert), key: readFileSync(tls.key) } }) : Fastify({ logger: false })) as unknown as FastifyInstance;
  if (redis) {
    await app.register(rateLimit, {
      max: 1_000_000_000,
      timeWindow: 1000,
      redis,
      keyGenerator: (req) => String(req.headers['x-api-key'] ?? req.ip),
    });
  }
  await app.register(httpProxy, { upstream, prefix: '/orders', rewritePrefix: '/orders' });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    close: async () => {
      await app.close();
      redis?.disconnect();
    },
  };
});
