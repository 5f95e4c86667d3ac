// examples/lists.yaml exactly as shipped, through the real gateway with the
// demo upstream: the curl lines of its header, and each entry, as tests.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type RunningSluice, startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { call, silent } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';

const from = (ip: string, extra: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ip, ...extra } });

describe('examples/lists.yaml', () => {
  it('denies the scanner network, lets its monitor through unlimited, lifts the office from login-per-ip only', async () => {
    const port = await freePort();
    const config = loadConfig('examples/lists.yaml', { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}` });
    const app: RunningSluice = await startSluice(config, { demoUpstream: { port }, logger: silent });
    try {
      const url = app.url;
      const denied = await call(`${url}/api/orders`, from('203.0.113.9'));
      assert.equal(denied.status, 403);
      assert.deepEqual(JSON.parse(denied.body), { error: 'denied' });
      const monitor = [];
      for (let i = 0; i < 5; i++) monitor.push((await call(`${url}/api/orders`, from('203.0.113.5'))).status);
      assert.deepEqual(monitor, [200, 200, 200, 200, 200], 'more than orders-per-ip (3) allows: no limit applied');
      const stranger = [];
      for (let i = 0; i < 4; i++) stranger.push((await call(`${url}/api/orders`, from('192.0.2.1'))).status);
      assert.deepEqual(stranger, [200, 200, 200, 429]);
      const office = [];
      for (let i = 0; i < 5; i++) office.push((await call(`${url}/api/login`, { method: 'POST', ...from('198.51.100.20') })).status);
      assert.deepEqual(office, [200, 200, 200, 200, 200], 'login-per-ip (burst 2) lifted for the office');
      const elsewhere = [];
      for (let i = 0; i < 4; i++) elsewhere.push((await call(`${url}/api/login`, { method: 'POST', ...from('192.0.2.2') })).status);
      assert.equal(elsewhere.at(-1), 429, 'login-per-ip still applies to everyone else');
      assert.equal((await call(`${url}/api/orders`, from('192.0.2.3', { 'user-agent': 'BadBot/2.1' }))).status, 403);
      assert.equal((await call(`${url}/api/orders`, from('2001:db8:bad::7'))).status, 403);
    } finally {
      await app.close();
    }
  });
});
