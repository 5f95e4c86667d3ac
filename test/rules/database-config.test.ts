// The `database:` timeouts: defaults when absent, values as written, and a
// clear error naming the field for a bad one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';

const BASE = `listen: 127.0.0.1:9000
routes:
  - id: orders
    path: /orders
    upstream: http://127.0.0.1:8090
`;

describe('database: timeouts in the config', () => {
  it('defaults to 3 s statements and connects, 500 ms clock skew and a 2 s readiness probe', () => {
    assert.deepEqual(parseConfig(BASE).database, {
      url: undefined,
      statementTimeoutMs: 3000,
      connectTimeoutMs: 3000,
      maxClockSkewMs: 500,
      healthTimeoutMs: 2000,
      tls: undefined,
      password: undefined,
    });
  });

  it('takes the values written', () => {
    const text = `${BASE}database:\n  url: postgres://u@db/sluice\n  statementTimeoutMs: 1500\n  connectTimeoutMs: 800\n  maxClockSkewMs: 0\n  healthTimeoutMs: 900\n`;
    assert.deepEqual(parseConfig(text).database, {
      url: 'postgres://u@db/sluice',
      statementTimeoutMs: 1500,
      connectTimeoutMs: 800,
      maxClockSkewMs: 0,
      healthTimeoutMs: 900,
      tls: undefined,
      password: undefined,
    });
  });

  it('refuses a bad value, naming the field', () => {
    const cases: [string, string][] = [
      ['statementTimeoutMs: 0', 'statementTimeoutMs'],
      ['connectTimeoutMs: 1.5', 'connectTimeoutMs'],
      ['maxClockSkewMs: -1', 'maxClockSkewMs'],
      ['healthTimeoutMs: "2s"', 'healthTimeoutMs'],
      ['statementTimout: 100', 'statementTimout'],
    ];
    for (const [line, field] of cases) {
      assert.throws(
        () => parseConfig(`${BASE}database:\n  ${line}\n`, { source: 'config.yaml' }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(field),
        line,
      );
    }
  });
});
