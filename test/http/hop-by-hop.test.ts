// The header lists the proxy builds, on their own: the upstream's raw list
// (Buffers from undici, strings from node) filtered for the client, and the
// Forwarded header's host quoted only when it is not a token (RFC 7239 §4).
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { forwardedRequestHeaders, forwardedResponseHeaders } from '../../src/http/hop-by-hop.js';
import { ClientIpResolver } from '../../src/request-limits/client-ip.js';

const raw = (...pairs: string[]) => pairs.map((text) => Buffer.from(text, 'latin1'));

describe('the upstream response headers for the client', () => {
  it('drops hop-by-hop headers and those the Connection header names, from Buffers or strings alike', () => {
    const list = ['Content-Type', 'text/plain', 'Connection', 'keep-alive, X-Hop', 'X-Hop', 'secret', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'X-Kept', 'yes'];
    const expected = ['content-type', 'text/plain', 'x-kept', 'yes'];
    assert.deepEqual(forwardedResponseHeaders(raw(...list)), expected);
    assert.deepEqual(forwardedResponseHeaders(list), expected);
  });

  it('keeps repeated headers in their order, a Connection of keep-alive alone names nothing, and values stay Latin-1', () => {
    const list = raw('Set-Cookie', 'a=1', 'Connection', 'keep-alive', 'Set-Cookie', 'b=2', 'X-Name', 'caf\u00e9');
    assert.deepEqual(forwardedResponseHeaders(list), ['set-cookie', 'a=1', 'set-cookie', 'b=2', 'x-name', 'caf\u00e9']);
  });

  it('a header named by a second Connection header is dropped too', () => {
    assert.deepEqual(forwardedResponseHeaders(['Connection', 'close', 'Connection', 'X-Late', 'X-Late', '1', 'X-Kept', '2']), ['x-kept', '2']);
  });
});

describe('the Forwarded header sent upstream', () => {
  const forwardedFor = (host: string) => {
    const req = { rawHeaders: ['Host', host], headers: { host }, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
    const out = forwardedRequestHeaders(req, new ClientIpResolver({ trustedProxies: [], header: 'x-forwarded-for' }));
    return out[out.indexOf('forwarded') + 1];
  };

  it('a host that is a token goes bare, one with a port is quoted, quotes and backslashes inside are escaped', () => {
    assert.equal(forwardedFor('api.example.com'), 'for=127.0.0.1;proto=http;host=api.example.com');
    assert.equal(forwardedFor('api.example.com:8443'), 'for=127.0.0.1;proto=http;host="api.example.com:8443"');
    assert.equal(forwardedFor('a"b\\c'), 'for=127.0.0.1;proto=http;host="a\\"b\\\\c"');
  });
});
