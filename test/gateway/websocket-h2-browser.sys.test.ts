// WebSocket over HTTP/2 from a real browser (RFC 8441): Chromium, on the HTTP/2
// connection it already holds to the gateway, opens its WebSockets as extended
// CONNECT streams once the gateway advertises SETTINGS_ENABLE_CONNECT_PROTOCOL.
// Frames cross both ways; past the route's limit the stream is refused before
// any upstream connection.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { hasChromium, launchBrowser, type TestBrowser } from '../helpers/browser.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { startGateway } from '../helpers/gateway-support.js';
import { type EchoUpstream, startEcho } from '../helpers/ws-echo.js';

const yaml = (certs: TestCertificates) => `
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey} }
routes:
  - id: live
    path: /live/*
    upstream: '\${UP}'
    stripPrefix: true
    anonymous: true
    limits: [{ id: live-per-ip, key: ip, rule: { policy: token_bucket, capacity: 2, refillPerSecond: 0.001 } }]
  - { id: page, path: /*, upstream: '\${UP}', anonymous: true, limits: [{ id: pages, key: ip, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 } }] }
`;

/** Runs in the page: opens a WebSocket, sends each message, resolves with the echoes or with how it failed. */
const echoInPage = ([url, messages]: [string, string[]]) =>
  new Promise<string[] | string>((resolve) => {
    const ws = new WebSocket(url);
    const echoes: string[] = [];
    ws.onopen = () => {
      for (const message of messages) ws.send(message);
    };
    ws.onmessage = (event) => {
      echoes.push(String(event.data));
      if (echoes.length === messages.length) {
        ws.close(1000);
        resolve(echoes);
      }
    };
    ws.onclose = (event) => resolve(`closed ${event.code}`);
  });

describe('WebSocket over HTTP/2 from Chromium', { skip: !hasChromium && 'no /usr/bin/chromium (apt-get install chromium)' }, () => {
  let certs: TestCertificates;
  let upstream: EchoUpstream;
  let gateway: RunningSluice;
  let browser: TestBrowser;

  before(async () => {
    certs = makeCertificates();
    upstream = await startEcho();
    gateway = await startGateway(yaml(certs), { UP: upstream.url });
    browser = await launchBrowser(['--ignore-certificate-errors']);
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
    await upstream?.close();
    certs?.remove();
  });

  it('opens its WebSocket as an HTTP/2 stream, echoes both ways, and is refused past the limit before any upstream connection', async () => {
    const { page } = browser;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    const handshakes: number[] = [];
    cdp.on('Network.webSocketHandshakeResponseReceived', (event) => handshakes.push(event.response.status));
    const loaded = await page.goto(`${gateway.url}/index`);
    assert.equal(await loaded?.finished(), null);
    assert.equal(await page.evaluate(() => performance.getEntriesByType('navigation').map((entry) => (entry as PerformanceResourceTiming).nextHopProtocol)[0]), 'h2');
    const wsUrl = `${gateway.url.replace(/^https/, 'wss')}/live/feed`;
    assert.deepEqual(await page.evaluate(echoInPage, [wsUrl, ['one', 'two', 'three']] as [string, string[]]), ['one', 'two', 'three']);
    assert.deepEqual(handshakes, [200], 'the handshake was an HTTP/2 200, not an HTTP/1.1 101');
    assert.equal(upstream.upgrades.at(-1)?.path, '/feed');
    assert.deepEqual(await page.evaluate(echoInPage, [wsUrl, ['again']] as [string, string[]]), ['again']);
    const before = upstream.upgrades.length;
    assert.equal(await page.evaluate(echoInPage, [wsUrl, ['refused']] as [string, string[]]), 'closed 1006');
    assert.equal(upstream.upgrades.length, before, 'the refused stream never reached the upstream');
  });
});
