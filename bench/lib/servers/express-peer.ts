// Peer: Express + http-proxy-middleware + express-rate-limit with
// rate-limit-redis on the same Redis, keyed by X-Api-Key, nothing refused.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { createProxyMiddleware } from 'http-proxy-middleware';
import { Redis } from 'ioredis';
import { RedisStore } from 'rate-limit-redis';
import { args, serve } from './serve.js';

const { upstream, redisUrl } = args<{ upstream: string; redisUrl: string }>();

await serve(async () => {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const app = express();
  app.use(
    rateLimit({
      windowMs: 1000,
      limit: 1_000_000_000,
      standardHeaders: 'draft-7',
      legacyHeaders: false,
      keyGenerator: (req) => String(req.headers['x-api-key'] ?? 'anonymous'),
      store: new RedisStore({
        sendCommand: (command: string, ...rest: string[]) => redis.call(command, ...rest) as never,
      }),
    }),
  );
  app.use('/orders', createProxyMiddleware({ target: `${upstream}/orders` }));
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
            redis.disconnect();
          }),
      });
    });
  });
});
