// An upstream instance killed with requests on it (issue 38): a GET, HEAD or
// OPTIONS without a body whose connection broke before any response byte goes
// once to the other instance, as Envoy's `retry_on: connect-failure,reset` and
// nginx's `proxy_next_upstream error` do; a POST is never sent again (the
// upstream may have acted on it). The instance is "killed" by destroying its
// server with every socket, requests in flight, through the real listener.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, tally } from '../helpers/gateway-support.js';
import { until } from '../helpers/poll.js';

interface Instance {
  name: string;
  port: number;
  server: Server;
  /** Requests seen, by method. */
  seen: Record<string, number>;
  /** Requests held without an answer (hold mode), answered or cut when the instance dies. */
  pending: Set<ServerResponse>;
  /** Answer after this many ms; undefined = hold until killed. */
  answerAfterMs: number | undefined;
}

async function startInstance(name: string, answerAfterMs: number | undefined): Promise<Instance> {
  const instance = { name, port: 0, seen: {}, pending: new Set(), answerAfterMs } as unknown as Instance;
  instance.server = createServer((req, res) => {
    req.resume();
    const method = req.method ?? '?';
    instance.seen[method] = (instance.seen[method] ?? 0) + 1;
    instance.pending.add(res);
    res.once('close', () => instance.pending.delete(res));
    if (instance.answerAfterMs === undefined) return;
    setTimeout(() => res.end(name), instance.answerAfterMs);
  });
  await new Promise<void>((resolve) => instance.server.listen(0, '127.0.0.1', () => resolve()));
  instance.port = (instance.server.address() as AddressInfo).port;
  return instance;
}

/** Gone at once: no new connection is accepted and every open one (requests in flight too) is cut. */
function kill(instance: Instance): Promise<void> {
  return new Promise((resolve) => {
    instance.server.close(() => resolve());
    instance.server.closeAllConnections();
  });
}

const KEY = { 'x-api-key': 'killed-instance-test' };
const CONFIG = (a: Instance, b: Instance) => `routes:
  - { id: pair, path: /pair/*, upstream: ['http://127.0.0.1:${a.port}', 'http://127.0.0.1:${b.port}'] }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
`;

describe('an upstream instance killed with requests on it', () => {
  let a: Instance;
  let b: Instance;
  let gateway: RunningSluice;
  before(async () => {
    a = await startInstance('a', undefined);
    b = await startInstance('b', 0);
    gateway = await startGateway(CONFIG(a, b));
  });
  after(async () => {
    await gateway.close();
    await kill(a).catch(() => {});
    await kill(b);
  });

  it('GET, HEAD and OPTIONS cut before their headers are answered by the other instance; a POST is not sent again', async () => {
    // a holds what it gets; requests alternate, so each method has some on a
    const requests = ['GET', 'HEAD', 'OPTIONS', 'POST'].flatMap((method) =>
      Array.from({ length: 4 }, () => call(`${gateway.url}/pair/x`, { method, headers: KEY, ...(method === 'POST' ? { body: 'order' } : {}) }).then((reply) => ({ method, ...reply }))),
    );
    const total = (instance: Instance) => Object.values(instance.seen).reduce((sum, n) => sum + n, 0);
    await until(() => total(a) + total(b) === requests.length, 'every request to reach an instance');
    assert.equal(Object.keys(a.seen).length, 4, `a holds some of each method: ${JSON.stringify(a.seen)}`);
    const heldOnA = { ...a.seen };
    const postsOnB = b.seen.POST ?? 0;
    await kill(a);
    const replies = await Promise.all(requests);
    for (const method of ['GET', 'HEAD', 'OPTIONS']) {
      const statuses = replies.filter((reply) => reply.method === method).map((reply) => reply.status);
      assert.deepEqual(statuses, [200, 200, 200, 200], `${method}: ${statuses} (${heldOnA[method]} were on a when it died)`);
    }
    const posts = replies.filter((reply) => reply.method === 'POST');
    assert.equal(posts.filter((reply) => reply.status === 502).length, heldOnA.POST, 'each POST cut on a is answered 502, not resent');
    assert.equal(b.seen.POST ?? 0, postsOnB, 'b never saw a POST that a had');
    assert.equal((a.seen.POST ?? 0) + (b.seen.POST ?? 0), 4, 'each POST reached an upstream once');
  });
});

describe('one of two instances killed under a steady stream of GETs', () => {
  it('answers every GET', async () => {
    const a = await startInstance('a', 30);
    const b = await startInstance('b', 30);
    const gateway = await startGateway(CONFIG(a, b));
    try {
      const replies: Promise<{ status: number }>[] = [];
      let cutOnA = 0;
      let killed: Promise<void> | undefined;
      // 100 GETs a second for 3 s; halfway, a dies with requests in flight on it
      for (let i = 0; i < 300; i++) {
        replies.push(call(`${gateway.url}/pair/s${i}`, { headers: KEY }));
        if (i >= 150 && killed === undefined && a.pending.size > 0) {
          cutOnA = a.pending.size;
          killed = kill(a);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const statuses = tally(await Promise.all(replies));
      assert.ok(cutOnA > 0, 'a died with GETs in flight on it');
      assert.deepEqual(statuses, { 200: 300 }, `${cutOnA} GETs were on a when it died`);
      await killed;
    } finally {
      await gateway.close();
      await kill(b);
      await kill(a).catch(() => {});
    }
  });
});
