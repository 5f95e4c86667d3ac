// The rapid-reset attack (CVE-2023-44487) as it goes on the wire: each write
// carries HEADERS and RST_STREAM for stream after stream (test/helpers/rapid-reset.ts).
// A stream reset in the read that brought it never reaches the limiter or the
// upstream, and a connection past its reset budget gets GOAWAY
// ENHANCE_YOUR_CALM with none of the requests it had opened by then handled,
// not even those it left open: the attack costs the gateway node's stream
// objects and nothing more. Its address then waits out a cool-down before it
// may connect again (refused at accept, no TLS handshake), unless it is a
// trusted proxy's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { constants } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import type { RunningSluice } from '../../src/app.js';
import { rapidReset } from '../helpers/rapid-reset.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { until } from '../helpers/poll.js';
import { h2Get, h2Session, type HeldEngine, heldEngine } from './h2-support.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const COOLDOWN_MS = 1_500;
const yaml = (certs: TestCertificates, extra = '') => `
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey}, http2: true }
limits: { http2MaxResetsPerSecond: 50, http2ResetCooldownMs: ${COOLDOWN_MS} }${extra}
routes:
  - { id: api, path: '/api/*', upstream: '\${UP}', limits: [{ id: api-rate, key: tenant, rule: { policy: token_bucket, capacity: 1000000, refillPerSecond: 1000000 } }] }
tenants: { keys: [{ key: h2-key-1, tenant: shop-a }] }
`;
const HEADERS = { 'x-api-key': 'h2-key-1' };

describe('HTTP/2 rapid reset, frames on the wire', () => {
  let certs: TestCertificates;
  let upstream: TestUpstream;
  let gateway: RunningSluice;
  let engine: HeldEngine;
  let arrived = 0;
  let decisions = 0;

  before(async () => {
    certs = makeCertificates();
    upstream = await startUpstream((req, res) => {
      arrived++;
      req.resume();
      res.end('{"ok":true}');
    });
    const env = { UP: upstream.url };
    engine = heldEngine(yaml(certs), env);
    // Counted whichever way the gateway asks (one limit goes through decide, several through decideAll).
    const [decide, decideAll] = [engine.decide.bind(engine), engine.decideAll.bind(engine)];
    engine.decide = (...args) => {
      decisions++;
      return decide(...args);
    };
    engine.decideAll = (calls) => {
      decisions++;
      return decideAll(calls);
    };
    gateway = await startGateway(yaml(certs), env, { engine });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
    certs.remove();
  });

  it('streams reset in the read that brought them are never decided nor forwarded; past the budget, GOAWAY and nothing more is handled', async () => {
    [arrived, decisions] = [0, 0];
    // Each write: 60 streams opened and reset (the budget is 50), then 5 opened and left open.
    const attack = await rapidReset({ url: gateway.url, ca: readFileSync(certs.ca), path: '/api/x', headers: HEADERS, batch: 60, openAfter: 5, maxSessions: 1 }, () => true);
    assert.deepEqual(attack.goaways.slice(0, 1), [constants.NGHTTP2_ENHANCE_YOUR_CALM], 'the connection over its reset budget was told why');
    await until(() => gateway.gateway.upstreamsInFlight === 0, 'the upstream pool idle');
    assert.equal(decisions, 0, 'no stream of the attack reached the limiter, not even the five it left open');
    assert.equal(arrived, 0, 'nor the upstream');
    // The attacker's address may not come straight back: closed at accept, before any TLS handshake.
    const cutAt = Date.now();
    assert.equal(await tlsOutcome(gateway.url, certs), 'closed before the handshake');
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, COOLDOWN_MS + 100 - (Date.now() - cutAt))));
    // The counting itself works: after the cool-down, a well-behaved client on its own connection is decided and served.
    const client = h2Session(gateway.url, certs);
    assert.equal((await h2Get(client, { ':path': '/api/x', ...HEADERS }).answer).status, 200);
    assert.deepEqual([decisions, arrived], [1, 1]);
    client.close();
  });

  it("a trusted proxy's address, or any with the cool-down off, may connect again at once", async () => {
    for (const extra of ['\nclientIp: { trustedProxies: [127.0.0.1/32] }', '', ] as const) {
      const limits = extra === '' ? yaml(certs).replace(`http2ResetCooldownMs: ${COOLDOWN_MS}`, 'http2ResetCooldownMs: 0') : yaml(certs, extra);
      const other = await startGateway(limits, { UP: upstream.url });
      try {
        const attack = await rapidReset({ url: other.url, ca: readFileSync(certs.ca), path: '/api/x', headers: HEADERS, batch: 60, maxSessions: 1 }, () => true);
        assert.equal(attack.goaways[0], constants.NGHTTP2_ENHANCE_YOUR_CALM);
        assert.equal(await tlsOutcome(other.url, certs), 'handshake done', extra === '' ? 'cool-down off' : 'a trusted proxy');
      } finally {
        await other.close();
      }
    }
  });
});

/** Whether a TLS connection to `url` gets through its handshake, or is closed before. */
function tlsOutcome(url: string, certs: TestCertificates): Promise<'handshake done' | 'closed before the handshake'> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: target.hostname, port: Number(target.port), ca: readFileSync(certs.ca), ALPNProtocols: ['h2'] });
    socket.on('error', () => {});
    socket.once('secureConnect', () => {
      socket.destroy();
      resolve('handshake done');
    });
    socket.once('close', () => resolve('closed before the handshake'));
  });
}
