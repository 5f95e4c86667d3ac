// The drain on the HTTPS listeners' HTTP/1.1 side: a keep-alive request in
// flight when close() begins is answered whole with `Connection: close`, on the
// HTTPS-only listener and on the HTTP/2 one's HTTP/1.1 fallback (node makes
// their responses from a different option each: drain.ts's response class must
// reach both).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { until } from '../helpers/poll.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

describe('draining an HTTPS listener (HTTP/1.1)', () => {
  let certs: TestCertificates;
  let upstream: TestUpstream;
  let held = 0;

  before(async () => {
    certs = makeCertificates();
    upstream = await startUpstream((req, res) => {
      held++;
      req.resume();
      setTimeout(() => res.end('{"held":true}'), 400);
    });
  });
  after(async () => {
    await upstream?.close();
    certs?.remove();
  });

  for (const http2 of [false, true]) {
    it(`${http2 ? 'HTTP/2 listener, its HTTP/1.1 side' : 'HTTPS listener'}: the request in flight gets its 200 and Connection: close; one before the drain kept the connection`, async () => {
      const yaml = `tls: { cert: ${certs.serverCert}, key: ${certs.serverKey}, http2: ${http2} }\nroutes: [{ id: r, path: /*, upstream: '\${UP}' }]\ntenants: { unknownKeys: default-rule }\n`;
      const gateway = await startGateway(yaml, { UP: upstream.url }, { shutdownGraceMs: 10_000 });
      const agent = new Agent({ connect: { ca: readFileSync(certs.ca) }, keepAliveTimeout: 10_000 });
      try {
        const ask = () => request(`${gateway.url}/slow`, { dispatcher: agent, headers: { 'x-api-key': 'drain-https-key' } });
        const before = await ask();
        assert.equal(before.statusCode, 200);
        assert.equal(before.headers.connection, 'keep-alive', 'not draining yet: the connection is kept');
        await before.body.text();
        const heldBefore = held;
        const inFlight = ask();
        await until(() => held > heldBefore, 'the request to reach the upstream');
        const closing = gateway.close();
        const answer = await inFlight;
        assert.equal(answer.statusCode, 200);
        assert.equal(await answer.body.text(), '{"held":true}');
        assert.equal(answer.headers.connection, 'close', 'begun before the drain, answered during it: Connection: close');
        await closing;
      } finally {
        await agent.close();
        await gateway.close();
      }
    });
  }
});
