// Requests the gateway answers before the limiter decides (401 missing or
// unknown key, 404 no route, 413 body too large, 400 unparsable) are in the
// history's status classes, through real HTTP against a real gateway: under
// their route when one matched, else under `(no route)`; with no verdict and
// no decision time (they never reached the decision).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { until } from '../helpers/poll.js';

const TOKEN = 'early-admin-token-0123456789abcd';
const KEY = { 'x-api-key': 'early-key-000001' };
const yaml = `
routes:
  - { id: orders, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
tenants:
  unknownKeys: reject
  keys:
    - { key: early-key-000001, tenant: early }
limits: { maxBodyBytes: 100 }
defaultRule: { policy: token_bucket, capacity: 1000, refillPerSecond: 100 }
`;

interface RouteView {
  totals: Record<string, number>;
  totalLatency: Record<string, number>;
}

/** Sends raw bytes node's parser refuses; resolves with the status line it answered. */
function sendGarbage(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('NOT HTTP AT ALL\r\n\r\n'));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => resolve(text.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

describe('history: requests answered before the decision', () => {
  let upstream: TestUpstream;
  let sluice: RunningSluice;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-early-'));

  before(async () => {
    upstream = await startUpstream();
    const env = { UPSTREAM: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
    sluice = await startGateway(yaml, env, { ruleStore: true, admin: true });
  });
  after(async () => {
    await sluice?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('401, 404, 413 and 400 count in 4xx, per route when known, else under (no route)', async () => {
    const orders = `${sluice.url}/orders`;
    const statuses = [
      (await call(orders, { method: 'POST', body: '{}' })).status, // no key: 401, route known
      (await call(orders, { method: 'POST', headers: { 'x-api-key': 'who-is-this-00001' }, body: '{}' })).status, // unknown key: 401
      (await call(orders, { method: 'POST', headers: KEY, body: 'x'.repeat(500) })).status, // 413
      (await call(orders, { method: 'POST', headers: KEY, body: '{}' })).status, // decided, allowed
      (await call(`${sluice.url}/nowhere`, { headers: KEY })).status, // 404
      (await call(`${sluice.url}/nowhere`)).status, // no key, no route: 401
    ];
    assert.deepEqual(statuses, [401, 401, 413, 200, 404, 401]);
    assert.match(await sendGarbage(Number(new URL(sluice.url).port)), /^HTTP\/1\.1 400 /);

    let routes: Record<string, RouteView> = {};
    await until(async () => {
      const reply = await call(`${sluice.adminUrl}/ui/api/history?range=5m`, { headers: { authorization: `Bearer ${TOKEN}` } });
      routes = (JSON.parse(reply.body) as { routes: Record<string, RouteView> }).routes;
      return routes.orders?.totals.s4xx === 3 && routes['(no route)']?.totals.s4xx === 3;
    }, 'the history shows every answer', 10_000, 50);
    const orders4 = routes.orders!.totals;
    assert.deepEqual([orders4.allowed, orders4.refused, orders4.shadow, orders4.s2xx, orders4.s4xx, orders4.s429, orders4.s5xx], [1, 0, 0, 1, 3, 0, 0], 'one decided request; three answered before');
    const none = routes['(no route)']!;
    assert.deepEqual([none.totals.allowed, none.totals.refused, none.totals.shadow, none.totals.s2xx, none.totals.s4xx], [0, 0, 0, 0, 3]);
    assert.ok(none.totalLatency.requestP50 !== undefined, 'the whole request was timed');
    assert.equal(none.totalLatency.decisionP50, undefined, 'no decision time: the limiter never decided');
  });
});
