// The same service as app.mjs, written by a CommonJS user: require('sluice'),
// require('sluice/fastify') and require('sluice/express').
const { createEngine, parseRule } = require('sluice');
const { sluiceExpress } = require('sluice/express');
const { sluiceFastify } = require('sluice/fastify');

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
  const app = require('fastify')();
  for (const [name, options] of Object.entries(routes)) {
    app.register(async (scope) => {
      await scope.register(sluiceFastify, { engine, route: name, ...options });
      scope.get(`/${name}`, async () => ({ ok: true }));
    });
  }
  app.register(async (scope) => {
    await scope.register(sluiceFastify, { engine, limits: both, headers: { ietf: true } });
    scope.get('/both', async () => ({ ok: true }));
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

function expressApp() {
  const app = require('express')();
  for (const [name, options] of Object.entries(routes)) app.use(`/${name}`, sluiceExpress({ engine, route: `e-${name}`, ...options }));
  app.use('/both', sluiceExpress({ engine, limits: both, headers: { ietf: true } }));
  app.use((_req, res) => {
    res.json({ ok: true });
  });
  return new Promise((resolve) => {
    const server = app.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${server.address().port}`,
        close: () => new Promise((done) => server.close(() => done()).closeAllConnections()),
      }),
    );
  });
}

(framework === 'fastify' ? fastifyApp() : expressApp()).then((running) => {
  process.stdout.write(`READY ${running.url}\n`);
  process.stdin.resume();
  process.stdin.on('end', async () => {
    await running.close();
    await engine.close();
    process.stdout.write('CLOSED\n');
  });
});
