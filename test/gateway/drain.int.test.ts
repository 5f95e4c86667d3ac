// Draining on close() (what SIGTERM calls) under keep-alive load: /readyz turns
// 503 first, every request in flight gets its 200, responses from then on say
// `Connection: close`, and no client sees a reset.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KeepAliveLoad } from '../helpers/drain-load.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { until } from '../helpers/poll.js';

const YAML = `
routes: [{ id: r, path: /r, upstream: '\${UP}' }]
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
admin: { listen: '127.0.0.1:0' }
dataDir: '\${DATA}'
`;

describe('drain under keep-alive load', () => {
  let upstream: TestUpstream;
  let dataDir: string;
  /** Requests the gateway forwarded, and those the upstream has not answered yet. */
  let received = 0;
  let holding = 0;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sluice-drain-'));
    upstream = await startUpstream((req, res) => {
      received++;
      holding++;
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          holding--;
          res.end('{}');
        }, 1_500),
      );
    });
  });
  after(async () => {
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('close() mid-load: readyz 503, 0 resets, every in-flight request 200, Connection: close from then on', async () => {
    const app = await startGateway(YAML, { UP: upstream.url, DATA: dataDir }, { ruleStore: true, admin: true, shutdownGraceMs: 15_000 });
    const load = new KeepAliveLoad(`${app.url}/r`, { 'x-api-key': 'shop-a', 'content-type': 'application/json' });
    load.start(48);
    assert.equal((await call(`${app.adminUrl}/readyz`)).status, 200);
    // Every socket has carried a request and at least 16 are at the upstream.
    // Waited for, not slept: a loaded machine may take seconds to get there.
    await until(() => load.outcomes.filter((o) => o.status !== undefined).length >= 32 && holding >= 16, 'the load getting going', 20_000);
    const inFlight = holding;
    const drainStart = performance.now();
    const closing = app.close();
    const readyz = await call(`${app.adminUrl}/readyz`);
    assert.equal(readyz.status, 503);
    assert.equal(JSON.parse(readyz.body).draining, true);
    await closing;
    await load.finished();

    const errors = load.outcomes.filter((outcome) => outcome.error !== undefined && outcome.error !== 'ECONNREFUSED');
    assert.deepEqual(errors, [], 'no resets or other socket errors');
    const answered = load.outcomes.filter((outcome) => outcome.status !== undefined);
    assert.deepEqual(new Set(answered.map((outcome) => outcome.status)), new Set([200]));
    assert.ok(inFlight >= 16, `${inFlight} requests were in flight at the drain`);
    assert.equal(answered.length, received, 'every request the gateway forwarded was answered');
    // Sent less than 1 s before the drain: the upstream's 1.5 s puts their response after it.
    const afterDrain = answered.filter((outcome) => outcome.sentAt > drainStart - 1_000);
    assert.ok(afterDrain.length > 0);
    assert.deepEqual(new Set(afterDrain.map((outcome) => outcome.connection)), new Set(['close']));
  });
});
