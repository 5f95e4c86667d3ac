// The listener's `limits:` fields: documented defaults, and a clear error
// naming the field when they cannot work together.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';

const ROUTES = 'routes: [{ id: orders, path: /orders, upstream: http://127.0.0.1:8090 }]\n';
const parse = (yaml: string) => parseConfig(ROUTES + yaml, { source: 'limits.yaml', env: {} });

describe('limits: listener timeouts and body buffering', () => {
  it('defaults to seconds, not minutes', () => {
    const { limits } = parse('');
    assert.deepEqual(
      { ...limits },
      {
        maxHeaderBytes: 16_384,
        maxBodyBytes: 10 * 1024 * 1024,
        maxQueued: 1_000,
        headerTimeoutMs: 10_000,
        requestTimeoutMs: 60_000,
        websocketIdleTimeoutMs: 300_000,
        bodyIdleTimeoutMs: 10_000,
        keepAliveTimeoutMs: 5_000,
        bufferBodyBytes: 65_536,
        http2MaxConcurrentStreams: 128,
        http2MaxResetsPerSecond: 200,
        http2ResetCooldownMs: 10_000,
      },
    );
    assert.equal(parse('limits: { headerTimeoutMs: 2000 }\n').limits.keepAliveTimeoutMs, 5_000, 'unset fields keep their defaults');
  });

  it('names the field when a value is out of range or the header timeout exceeds the request timeout', () => {
    assert.throws(() => parse('limits: { bodyIdleTimeoutMs: 0 }\n'), (error: unknown) => error instanceof ConfigError && /limits\.bodyIdleTimeoutMs: must be at least 1/.test(error.message));
    assert.throws(() => parse('limits: { bufferBodyBytes: -1 }\n'), (error: unknown) => error instanceof ConfigError && /limits\.bufferBodyBytes/.test(error.message));
    assert.throws(
      () => parse('limits: { headerTimeoutMs: 20000, requestTimeoutMs: 10000 }\n'),
      (error: unknown) => error instanceof ConfigError && /limits\.headerTimeoutMs: must be at most limits\.requestTimeoutMs/.test(error.message),
    );
  });
});
