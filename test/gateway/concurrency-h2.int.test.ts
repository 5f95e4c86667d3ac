// `kind: concurrency` over HTTP/2 (ALPN h2 on the HTTPS listener): streams of
// one session count as requests in flight, the N+1th gets 429 naming the
// limit, and a stream the client resets gives its slot back.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type ClientHttp2Session, type ClientHttp2Stream, connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { type HoldingUpstream, inFlight, startHoldingUpstream } from './concurrency-support.js';
import { until } from '../helpers/poll.js';
import { startGateway } from '../helpers/gateway-support.js';

/** Opens a GET stream; `answer` resolves with its status and body once it ends. */
function open(session: ClientHttp2Session): { stream: ClientHttp2Stream; answer: Promise<{ status: number; body: string }> } {
  const stream = session.request({ ':path': '/slow', 'x-api-key': 'h2-cc-key-1' });
  stream.end();
  const answer = new Promise<{ status: number; body: string }>((resolve) => {
    let status = 0;
    let body = '';
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      body += chunk;
    });
    stream.on('close', () => resolve({ status, body }));
  });
  return { stream, answer };
}

describe('concurrency limit over HTTP/2', () => {
  let certs: TestCertificates;
  let upstream: HoldingUpstream;
  let gateway: RunningSluice;
  let session: ClientHttp2Session;

  before(async () => {
    certs = makeCertificates();
    upstream = await startHoldingUpstream();
    gateway = await startGateway(`
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey} }
routes:
  - { id: slow, path: /slow, upstream: '\${UP}', limits: [{ id: h2-cc, kind: concurrency, key: tenant, max: 2 }] }
tenants: { keys: [{ key: h2-cc-key-1, tenant: shop-a }] }
`, { UP: upstream.url });
    session = connect(gateway.url, { ca: readFileSync(certs.ca) });
  });
  after(async () => {
    session.close();
    upstream.finishAll();
    await gateway.close();
    await upstream.close();
    certs.remove();
  });

  it('N streams in flight, the next refused 429; a reset stream frees its slot', async () => {
    const first = open(session);
    const second = open(session);
    await until(() => upstream.held.length === 2, 'two streams at the upstream');
    const refused = await open(session).answer;
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.body).limit, 'h2-cc');
    first.stream.close(); // RST_STREAM: the client gave up
    await until(async () => (await inFlight('h2-cc')) === 1, "the reset stream's lease given back");
    const arrived = upstream.arrived;
    const third = open(session);
    await until(() => upstream.arrived === arrived + 1, 'the next stream at the upstream');
    upstream.finishAll();
    assert.deepEqual([(await second.answer).status, (await third.answer).status], [200, 200]);
  });
});
