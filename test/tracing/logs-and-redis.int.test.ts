// Log lines about a traced request carry its trace_id and span_id; over Redis
// the limit decision has the store call as its child, decided by redis.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { call, startGateway } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { CLIENT_TRACE, type HeaderUpstream, headerUpstream, TRACEPARENT } from './support.js';

describe('tracing: logs and the Redis call', () => {
  let receiver: OtlpReceiver;
  let upstream: HeaderUpstream;
  before(async () => {
    receiver = await startOtlpReceiver();
    upstream = await headerUpstream();
  });
  after(async () => {
    await upstream.close();
    await receiver.close();
  });

  it("a request's log line carries its trace_id and span_id", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const closed = `http://127.0.0.1:${await freePort()}`; // nothing listens: the upstream call fails and is logged
    const yaml = `
routes:
  - id: broken
    path: /broken
    upstream: ${closed}
    anonymous: true
    limits: [{ id: per-route, key: route, rule: { policy: fixed_window, limit: 100, windowMs: 60000 } }]
tracing: { enabled: true, protocol: http/json, endpoint: "${receiver.url}", scheduledDelayMs: 20 }
`;
    const sluice = await startGateway(yaml, {}, { logger, env: {} });
    try {
      assert.equal((await call(`${sluice.url}/broken`, { headers: { traceparent: TRACEPARENT } })).status, 502);
      const server = (await receiver.waitFor(1, (span) => span.traceId === CLIENT_TRACE && span.kind === 2))[0]!;
      assert.equal(server.status.code, 2, 'a 502 is an error');
      const line = lines.find((entry) => entry.msg === 'upstream request failed');
      assert.ok(line, 'the failure was logged');
      assert.equal(line.trace_id, CLIENT_TRACE);
      assert.match(String(line.span_id), /^[0-9a-f]{16}$/);
      const started = lines.find((entry) => entry.msg === 'sluice gateway listening')!;
      assert.equal(started.trace_id, undefined, 'a line about no request has none');
    } finally {
      await sluice.close();
    }
  });

  it('over Redis: the decision by redis, the store call a child of the limit span', async () => {
    const limit = `trace-${randomUUID().slice(0, 8)}`; // its own bucket on the shared Redis
    const yaml = `
routes:
  - id: orders
    path: /orders
    upstream: ${upstream.url}
    anonymous: true
    limits: [{ id: ${limit}, key: route, rule: { policy: fixed_window, limit: 100, windowMs: 60000 } }]
store: { url: redis://127.0.0.1:6379 }
tracing: { enabled: true, protocol: http/json, endpoint: "${receiver.url}", scheduledDelayMs: 20 }
`;
    const sluice = await startGateway(yaml, {}, { env: {} });
    try {
      const traceId = randomUUID().replaceAll('-', '');
      assert.equal((await call(`${sluice.url}/orders`, { headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } })).status, 200);
      const spans = await receiver.waitFor(4, (span) => span.traceId === traceId);
      const limits = spans.find((span) => span.name === 'sluice.limits')!;
      assert.deepEqual(limits.attributes['sluice.limit.sources'], ['redis']);
      const redis = spans.find((span) => span.name.startsWith('redis '))!;
      assert.equal(redis.parentSpanId, limits.spanId);
      assert.equal(redis.kind, 3);
      assert.equal(redis.attributes['db.system.name'], 'redis');
    } finally {
      await sluice.close();
    }
  });
});
