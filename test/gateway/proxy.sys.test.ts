// Proxying done properly, on both stores: 20 MB streamed both ways without
// being held whole, an upstream held while its client reads nothing, hop-by-hop
// headers stripped (repeated and Latin-1 ones kept), X-Forwarded-* set, and a
// client that leaves cancels its upstream request.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { nodeCall, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const TOTAL = 20 * 1024 * 1024;
const CHUNK = 64 * 1024;
/** More than every socket buffer on the way can hold (loopback autotunes to 32 MB receive, 4 MB send, per socket). */
const BIG = 256 * 1024 * 1024;

const config = (store: string) => `
routes:
  - { id: echo, path: /echo, upstream: '\${UP}' }
  - { id: hang, path: /hang, upstream: '\${UP}' }
  - { id: headers, path: /headers, upstream: '\${UP}' }
  - { id: big, path: /big, upstream: '\${UP}' }
tenants: { unknownKeys: default-rule }
limits: { maxBodyBytes: ${TOTAL * 2} }
${store}
`;

for (const kind of ['memory', 'redis'] as const) {
  describe(`proxying on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let upstream: TestUpstream;
    let gateway: RunningSluice;
    let hung: ((closed: boolean) => void) | undefined;
    let hungArrived: (() => void) | undefined;
    /** Bytes the /big upstream has handed to its socket so far. */
    let bigWritten = 0;

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      upstream = await startUpstream((req, res) => {
        if (req.url === '/echo') {
          // Echo as it arrives: the answer starts before the request ends.
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.flushHeaders();
          req.pipe(res);
        } else if (req.url === '/big') {
          // As fast as its socket takes it, and no faster.
          req.resume();
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(BIG) });
          const chunk = Buffer.alloc(CHUNK, 7);
          bigWritten = 0;
          const pump = () => {
            while (bigWritten < BIG) {
              bigWritten += CHUNK;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end();
          };
          pump();
        } else if (req.url === '/hang') {
          hungArrived?.();
          res.on('close', () => hung?.(!res.writableFinished));
        } else {
          req.resume();
          // A flat list: repeated headers as the upstream sent them, a Latin-1 byte in a value.
          res.writeHead(200, [
            ...['Content-Type', 'application/json', 'Connection', 'X-Up-Hop', 'X-Up-Hop', 'secret', 'Proxy-Authenticate', 'Basic', 'X-Up-Kept', 'yes'],
            ...['Set-Cookie', 'first=1', 'Set-Cookie', 'second=2', 'X-Up-Latin1', 'caf\u00e9'],
          ]);
          res.end(JSON.stringify(req.headers));
        }
      });
      const store = redis ? `store: { type: redis, url: ${redis.url} }` : 'store: { type: memory }';
      gateway = await startGateway(config(store), { UP: upstream.url });
    });
    after(async () => {
      await gateway.close();
      await upstream.close();
      await redis?.stop();
    });

    it('streams a 20 MB body both ways without holding it whole', async () => {
      const sentHash = createHash('sha256');
      const receivedHash = createHash('sha256');
      let sent = 0;
      let received = 0;
      let sentWhenAnswerBegan = -1;
      await new Promise<void>((resolve, reject) => {
        const req = httpRequest(`${gateway.url}/echo`, {
          method: 'POST',
          headers: { 'x-api-key': 'streamer', 'content-type': 'application/octet-stream' },
        });
        req.on('error', reject);
        req.on('response', (res: IncomingMessage) => {
          assert.equal(res.statusCode, 200);
          res.on('data', (chunk: Buffer) => {
            if (sentWhenAnswerBegan < 0) sentWhenAnswerBegan = sent;
            received += chunk.length;
            receivedHash.update(chunk);
          });
          res.on('end', resolve);
          res.on('error', reject);
        });
        let index = 0;
        const pump = () => {
          while (sent < TOTAL) {
            const chunk = Buffer.alloc(CHUNK, index++ % 251);
            sent += chunk.length;
            sentHash.update(chunk);
            if (!req.write(chunk)) {
              req.once('drain', pump);
              return;
            }
          }
          req.end();
        };
        pump();
      });
      assert.equal(received, TOTAL);
      assert.equal(receivedHash.digest('hex'), sentHash.digest('hex'));
      assert.ok(sentWhenAnswerBegan >= 0 && sentWhenAnswerBegan < TOTAL / 2, `the echo began after ${sentWhenAnswerBegan} bytes were sent`);
    });

    it('strips hop-by-hop headers both ways and sets X-Forwarded-*', async () => {
      const reply = await nodeCall(`${gateway.url}/headers`, {
          'x-api-key': 'header-checker',
          connection: 'keep-alive, X-Client-Hop',
          'x-client-hop': 'secret',
          'keep-alive': 'timeout=5',
          te: 'trailers',
          'proxy-authorization': 'Basic abc',
          'x-forwarded-for': '10.0.0.1',
          'x-client-kept': 'yes',
      });
      assert.equal(reply.status, 200);
      const got = JSON.parse(reply.body);
      for (const name of ['x-client-hop', 'keep-alive', 'te', 'proxy-authorization']) assert.equal(got[name], undefined, name);
      assert.equal(got['x-client-kept'], 'yes');
      // The client is no trusted proxy: what it wrote is dropped, never passed on as an address.
      assert.equal(got['x-forwarded-for'], '127.0.0.1');
      assert.equal(got.forwarded, `for=127.0.0.1;proto=http;host="${new URL(gateway.url).host}"`);
      assert.equal(got['x-forwarded-proto'], 'http');
      assert.equal(got['x-forwarded-host'], new URL(gateway.url).host);
      assert.equal(got.host, new URL(upstream.url).host, 'the upstream sees its own Host');
      assert.equal(reply.headers['x-up-hop'], undefined);
      assert.equal(reply.headers['proxy-authenticate'], undefined);
      assert.equal(reply.headers['x-up-kept'], 'yes');
      assert.deepEqual(reply.headers['set-cookie'], ['first=1', 'second=2'], 'repeated headers each reach the client');
      assert.equal(reply.headers['x-up-latin1'], 'caf\u00e9', 'a Latin-1 value passes byte for byte');
      assert.equal(reply.headers['x-ratelimit-limit'], '20');
    });

    it('holds the upstream while the client reads nothing, instead of buffering its answer, and goes on when it reads', async () => {
      const reply = await new Promise<IncomingMessage>((resolve, reject) => {
        const req = httpRequest(`${gateway.url}/big`, { headers: { 'x-api-key': 'slow-reader' } }, resolve);
        req.on('error', reject);
        req.end();
      });
      reply.pause();
      // Until the upstream can write no more: every buffer between it and the client is full.
      let seen = -1;
      while (bigWritten !== seen) {
        seen = bigWritten;
        await sleep(400);
      }
      assert.ok(bigWritten < BIG / 2, `the upstream wrote ${bigWritten} of ${BIG} bytes to a client that read none`);
      let received = 0;
      reply.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      reply.resume();
      await once(reply, 'end');
      assert.equal(received, BIG);
    });

    it('cancels the upstream request when the client goes away', async () => {
      const arrived = new Promise<void>((resolve) => {
        hungArrived = resolve;
      });
      const upstreamClosed = new Promise<boolean>((resolve) => {
        hung = resolve;
      });
      const req = httpRequest(`${gateway.url}/hang`, { headers: { 'x-api-key': 'leaver' } });
      req.on('error', () => {});
      req.end();
      await arrived;
      req.destroy();
      assert.equal(await upstreamClosed, true, 'the upstream saw its request cut before it answered');
    });
  });
}
