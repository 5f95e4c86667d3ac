// HTTP/2 streams the client resets never hold an upstream connection: a stream
// reset while its limit is decided is not forwarded, one reset while its
// answer is on the way has its upstream request aborted, and a rapid-reset
// attack (CVE-2023-44487: streams opened and cancelled at once) leaves another
// client served and the upstream pool idle once it stops.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { constants } from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { until } from '../helpers/poll.js';
import { h2Get, h2Session, type HeldEngine, heldEngine } from './h2-support.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const yaml = (certs: TestCertificates) => `
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey}, http2: true }
routes:
  - { id: api, path: '/api/*', upstream: '\${UP}', limits: [{ id: api-rate, key: tenant, rule: { policy: token_bucket, capacity: 1000000, refillPerSecond: 1000000 } }] }
tenants: { keys: [{ key: h2-key-1, tenant: shop-a }] }
`;
/** 8 MB in 64 KB chunks, more than any window holds: the answer is still streaming when the client resets. */
function bigAnswer(res: ServerResponse): void {
  const chunk = Buffer.alloc(65_536, 'a');
  let left = 128;
  const more = () => {
    while (left > 0 && !res.destroyed) {
      left--;
      if (!res.write(chunk)) return void res.once('drain', more);
    }
    res.end();
  };
  res.writeHead(200);
  more();
}
const GET = { ':path': '/api/x', 'x-api-key': 'h2-key-1' };

describe('HTTP/2 resets and the upstream pool', () => {
  let certs: TestCertificates;
  let upstream: TestUpstream;
  let arrived = 0;
  let engine: HeldEngine;
  let gateway: RunningSluice;
  let env: Record<string, string>;

  before(async () => {
    certs = makeCertificates();
    // Answers after a little while, so streams reset in that time are in flight upstream.
    upstream = await startUpstream((req, res) => {
      arrived++;
      req.resume();
      if (req.url === '/api/big') return bigAnswer(res);
      setTimeout(() => res.end('{"ok":true}'), 20);
    });
    env = { UP: upstream.url };
    engine = heldEngine(yaml(certs), env);
    gateway = await startGateway(yaml(certs), env, { engine });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
    certs.remove();
  });

  it('a stream reset while its limit is decided is not forwarded, and holds no upstream connection', async () => {
    const session = h2Session(gateway.url, certs);
    arrived = 0;
    engine.hold = true;
    const streams = Array.from({ length: 20 }, () => h2Get(session, GET));
    await until(() => engine.waiting === 20, 'twenty decisions waiting');
    for (const { stream } of streams) stream.close(constants.NGHTTP2_CANCEL);
    await Promise.all(streams.map((s) => s.answer));
    await sleep(100); // the RST_STREAM frames reach the gateway
    engine.release();
    const next = await h2Get(session, GET).answer;
    assert.equal(next.status, 200);
    await until(() => gateway.gateway.upstreamsInFlight === 0, 'every upstream connection idle');
    assert.equal(arrived, 1, 'only the stream still open reached the upstream');
    session.close();
  });

  it('a stream reset while its answer streams back aborts the upstream request, releasing its connection', async () => {
    const session = h2Session(gateway.url, certs);
    const big = h2Get(session, { ...GET, ':path': '/api/big' });
    await new Promise((go) => big.stream.once('response', go));
    big.stream.close(constants.NGHTTP2_CANCEL);
    await big.answer;
    await until(() => gateway.gateway.upstreamsInFlight === 0, 'the upstream connection released');
    session.close();
  });

  it('under a rapid-reset attack a second client keeps being served, and the pool returns to idle', async () => {
    const victim = h2Session(gateway.url, certs);
    const served: number[] = [];
    let attacking = true;
    const attack = (async () => {
      while (attacking) {
        const session = h2Session(gateway.url, certs);
        // Open streams and cancel each at once, until the gateway sends GOAWAY or the attack ends.
        while (attacking && !session.closed && !session.destroyed) {
          for (let i = 0; i < 50 && !session.closed && !session.destroyed; i++) {
            try {
              session.request(GET, { endStream: true }).on('error', () => {}).close(constants.NGHTTP2_CANCEL);
            } catch {
              break; // the session is going away
            }
          }
          await new Promise((go) => setImmediate(go));
        }
        session.destroy();
      }
    })();
    const victimLoop = (async () => {
      while (attacking) served.push((await h2Get(victim, GET).answer).status);
    })();
    await sleep(2_000);
    attacking = false;
    await attack;
    await victimLoop;
    assert.ok(served.length > 0, 'the second client got answers during the attack');
    assert.deepEqual([...new Set(served)], [200], 'every answer to the second client was 200');
    assert.equal((await h2Get(victim, GET).answer).status, 200, 'and it is served after the attack');
    await until(() => gateway.gateway.upstreamsInFlight === 0, 'the upstream pool back to idle', 15_000);
    victim.close();
  });
});
