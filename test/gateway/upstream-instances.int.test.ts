// Several upstream instances per route (issue 21): weighted balancing, no
// client error for GET traffic while one of two instances is killed and
// restarted (a refused connection goes to the other instance, which is then
// ejected for a while and back once it answers), retryOn statuses retried once
// for idempotent methods only, and the per-instance series on /metrics.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { call, startGateway } from '../helpers/gateway-support.js';

interface Instance {
  name: string;
  port: number;
  server: Server | undefined;
  served: number;
  status: number;
}

function listen(instance: Instance): Promise<void> {
  const server = createServer((req, res) => {
    req.resume();
    instance.served++;
    res.writeHead(instance.status, { 'x-instance': instance.name });
    res.end(instance.name);
  });
  instance.server = server;
  return new Promise((resolve) => server.listen(instance.port, '127.0.0.1', () => resolve()));
}

async function startInstance(name: string): Promise<Instance> {
  const instance: Instance = { name, port: 0, server: undefined, served: 0, status: 200 };
  await listen(instance);
  instance.port = (instance.server!.address() as AddressInfo).port;
  return instance;
}

function stop(instance: Instance): Promise<void> {
  const server = instance.server;
  instance.server = undefined;
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

describe('several upstream instances per route', () => {
  let a: Instance;
  let b: Instance;
  let gateway: RunningSluice;

  before(async () => {
    a = await startInstance('a');
    b = await startInstance('b');
    gateway = await startGateway(
      `routes:
  - { id: weighted, path: /weighted, upstream: ['http://127.0.0.1:${a.port}', { url: 'http://127.0.0.1:${b.port}', weight: 3 }] }
  - { id: pair, path: /pair/*, upstream: ['http://127.0.0.1:${a.port}', 'http://127.0.0.1:${b.port}'], retryOn: [503] }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
`,
    );
  });
  after(async () => {
    await gateway.close();
    await stop(a);
    await stop(b);
  });

  const KEY = { 'x-api-key': 'instances-test' };
  const reset = () => {
    a.served = 0;
    b.served = 0;
  };

  it('balances by weight, interleaved', async () => {
    reset();
    const served: string[] = [];
    for (let i = 0; i < 8; i++) served.push((await call(`${gateway.url}/weighted`, { headers: KEY })).body);
    assert.deepEqual([a.served, b.served], [2, 6]);
    assert.ok(!served.join('').includes('bbbb'), `smooth, not in runs: ${served.join('')}`);
  });

  it('GET traffic sees no error while one of two instances is killed and restarted', async () => {
    reset();
    const statuses: number[] = [];
    const some = async (n: number) => {
      for (let i = 0; i < n; i++) statuses.push((await call(`${gateway.url}/pair/x`, { headers: KEY })).status);
    };
    await some(10);
    await stop(a);
    await some(20);
    assert.deepEqual(new Set(statuses), new Set([200]), 'every request answered by an instance');
    const servedByB = b.served;
    assert.ok(servedByB >= 25, `b took a's share once a was gone (${servedByB})`);
    const metrics = await resilienceRegistry.metrics();
    assert.match(metrics, new RegExp(`sluice_upstream_ejections_total\\{route="pair",upstream="http://127.0.0.1:${a.port}"\\} [1-9]`));
    assert.match(metrics, new RegExp(`sluice_upstream_requests_total\\{route="pair",upstream="http://127.0.0.1:${a.port}",outcome="retried"\\} [1-9]`));
    // a comes back on the same port: once its ejection ends, the next request tries it, and it serves again.
    await listen(a);
    a.served = 0;
    for (let i = 0; i < 400 && a.served === 0; i++) {
      statuses.push((await call(`${gateway.url}/pair/x`, { headers: KEY })).status);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.ok(a.served > 0, 'the restarted instance is back in rotation');
    assert.deepEqual(new Set(statuses), new Set([200]));
  });

  it('retries an idempotent request once on a retryOn status, never a POST', async () => {
    a.status = 503;
    try {
      reset();
      const gets = await Promise.all(Array.from({ length: 6 }, () => call(`${gateway.url}/pair/y`, { headers: KEY })));
      assert.deepEqual(new Set(gets.map((reply) => reply.status)), new Set([200]), 'a GET answered 503 by a went to b');
      assert.equal(b.served, 6);
      reset();
      const posts = await Promise.all(Array.from({ length: 6 }, () => call(`${gateway.url}/pair/y`, { method: 'POST', headers: KEY, body: 'x' })));
      assert.ok(posts.some((reply) => reply.status === 503), `a POST is never sent twice: ${posts.map((reply) => reply.status + reply.body)} a=${a.served} b=${b.served}`);
      assert.equal(a.served + b.served, 6, 'each POST reached one instance once');
    } finally {
      a.status = 200;
    }
  });

  it('answers 502 when every instance refuses', async () => {
    await stop(a);
    await stop(b);
    const reply = await call(`${gateway.url}/pair/z`, { headers: KEY });
    assert.equal(reply.status, 502);
    assert.deepEqual(JSON.parse(reply.body), { error: 'upstream_unreachable' });
  });
});

describe('an active health check per route', () => {
  it('takes an instance whose health path fails out of rotation, and back once it passes', async () => {
    const healthy = { a: true };
    const servers: Server[] = [];
    const served = { a: 0, b: 0 };
    const start = (name: 'a' | 'b') =>
      new Promise<number>((resolve) => {
        const server = createServer((req, res) => {
          req.resume();
          if (req.url === '/healthz') {
            res.writeHead(name === 'a' && !healthy.a ? 503 : 200);
            res.end();
            return;
          }
          served[name]++;
          res.end(name);
        });
        servers.push(server);
        server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
      });
    const [portA, portB] = [await start('a'), await start('b')];
    const gateway = await startGateway(`routes:
  - { id: checked, path: /*, upstream: ['http://127.0.0.1:${portA}', 'http://127.0.0.1:${portB}'], healthCheck: { path: /healthz, intervalMs: 100, timeoutMs: 500 } }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
`);
    const KEY = { 'x-api-key': 'health-check-test' };
    const until = async (what: string, check: () => Promise<boolean>) => {
      for (let i = 0; i < 300; i++) {
        if (await check()) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.fail(`never: ${what}`);
    };
    try {
      await until('a serves', async () => (await call(`${gateway.url}/x`, { headers: KEY })).body === 'a');
      healthy.a = false;
      // Once the check has seen it, every request goes to b; none of them failed meanwhile.
      await until('a is out of rotation', async () => {
        const bodies = await Promise.all(Array.from({ length: 4 }, () => call(`${gateway.url}/x`, { headers: KEY })));
        return bodies.every((reply) => reply.status === 200 && reply.body === 'b');
      });
      const before = served.a;
      for (let i = 0; i < 10; i++) assert.equal((await call(`${gateway.url}/x`, { headers: KEY })).body, 'b');
      assert.equal(served.a, before, 'no request reached the unhealthy instance');
      healthy.a = true;
      await until('a is back', async () => (await call(`${gateway.url}/x`, { headers: KEY })).body === 'a');
    } finally {
      await gateway.close();
      for (const server of servers) {
        server.closeAllConnections();
        server.close();
      }
    }
  });

  it('refuses a health path that is not a path, naming the field', async () => {
    const { ConfigError } = await import('../../src/config/index.js');
    const { parseConfig } = await import('../../src/decision-service/load-config.js');
    assert.throws(
      () => parseConfig("routes: [{ id: r, path: /*, upstream: ['http://127.0.0.1:1'], healthCheck: { path: healthz } }]\n", { source: 'hc.yaml' }),
      (error: unknown) => error instanceof ConfigError && error.message.includes('routes[0].healthCheck.path: must be a path such as /healthz'),
    );
  });
});
