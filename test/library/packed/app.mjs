// A new user's ESM service, run from a fresh project with the packed tarball
// installed: `node app.mjs fastify|express REDIS_URL`. Prints `READY <url>`;
// when stdin ends it closes the app and the engine and must exit by itself.
import { createEngine, parseRule } from 'sluice';
import { sluiceExpress } from 'sluice/express';
import { sluiceFastify } from 'sluice/fastify';

const [framework, redisUrl] = process.argv.slice(2);
// A loaded machine can stall redis-server past the default 5 ms deadline (a healthy
// `closed` route would answer 503); a paused Redis is still answered within 200 ms.
const engine = createEngine({ redis: { url: redisUrl }, deadlineMs: 200 });
const bucket = (extra) => parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 10, ...extra });
const routes = {
  fallback: { rule: bucket({}), key: 'ip' },
  open: { rule: bucket({ onStoreDown: 'open' }), key: 'ip' },
  closed: { rule: bucket({ onStoreDown: 'closed' }), key: 'ip' },
};
const both = [
  { id: 'burst', key: 'ip', rule: parseRule({ policy: 'token_bucket', capacity: 2, refillPerSecond: 0.001 }) },
  { id: 'daily', key: 'ip', rule: parseRule({ policy: 'fixed_window', limit: 3, windowMs: 86_400_000 }) },
];

async function fastifyApp() {
  const { default: Fastify } = await import('fastify');
  const app = Fastify();
  for (const [name, options] of Object.entries(routes)) {
    await app.register(async (scope) => {
      await scope.register(sluiceFastify, { engine, route: name, ...options });
      scope.get(`/${name}`, async () => ({ ok: true }));
    });
  }
  await app.register(async (scope) => {
    await scope.register(sluiceFastify, { engine, limits: both, headers: { ietf: true } });
    scope.get('/both', async () => ({ ok: true }));
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

async function expressApp() {
  const { default: express } = await import('express');
  const app = express();
  for (const [name, options] of Object.entries(routes)) app.use(`/${name}`, sluiceExpress({ engine, route: `e-${name}`, ...options }));
  app.use('/both', sluiceExpress({ engine, limits: both, headers: { ietf: true } }));
  app.use((_req, res) => {
    res.json({ ok: true });
  });
  const server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((done) => server.close(() => done()).closeAllConnections()),
  };
}

const running = framework === 'fastify' ? await fastifyApp() : await expressApp();
process.stdout.write(`READY ${running.url}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await running.close();
  await engine.close();
  process.stdout.write('CLOSED\n');
});
