// The signature the sender puts on an event is the one the receiver's snippet
// in docs/notifications.md accepts: the snippet is read from the page and run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, it } from 'node:test';
import { signatureHeader, verifySignature } from '../../src/notify/signature.js';

type Verify = (secret: string, header: string, rawBody: string | Buffer, toleranceSeconds?: number) => boolean;

async function docsSnippet(): Promise<Verify> {
  const page = readFileSync(resolve(import.meta.dirname, '../../docs/notifications.md'), 'utf8');
  const code = /^```js\n([\s\S]*?)^```/m.exec(page)?.[1];
  assert.ok(code, 'docs/notifications.md has a js snippet');
  const module = (await import(`data:text/javascript,${encodeURIComponent(code)}`)) as { verifySluiceSignature: Verify };
  return module.verifySluiceSignature;
}

const secret = 'whsec-test-0123456789abcdef';
const body = JSON.stringify({ id: 'evt_1', type: 'limit.threshold', tenant: 'acme', limit: 'daily', threshold: 0.8 });
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('Sluice-Signature', () => {
  it('is t=<unix>,v1=<hex HMAC-SHA256 of t.body>', () => {
    assert.match(signatureHeader(secret, 1_700_000_000, body), /^t=1700000000,v1=[0-9a-f]{64}$/);
  });

  it("verifies with the receiver's snippet from the docs", async () => {
    const verify = await docsSnippet();
    const header = signatureHeader(secret, nowSeconds(), body);
    assert.equal(verify(secret, header, body), true);
    assert.equal(verify(secret, header, Buffer.from(body)), true);
  });

  it("is refused by the docs' snippet for another body, another secret or an old timestamp", async () => {
    const verify = await docsSnippet();
    const header = signatureHeader(secret, nowSeconds(), body);
    assert.equal(verify(secret, header, body.replace('0.8', '1')), false);
    assert.equal(verify('another-secret', header, body), false);
    assert.equal(verify(secret, signatureHeader(secret, nowSeconds() - 3600, body), body), false);
    assert.equal(verify(secret, 't=abc,v1=00', body), false);
  });

  it('verifySignature agrees, and refuses a malformed signature without throwing', () => {
    const now = nowSeconds();
    const header = signatureHeader(secret, now, body);
    assert.equal(verifySignature(secret, header, body, now), true);
    assert.equal(verifySignature(secret, header, `${body} `, now), false);
    assert.equal(verifySignature(secret, `t=${now},v1=zz`, body, now), false);
    assert.equal(verifySignature(secret, header, body, now + 301), false);
  });
});
