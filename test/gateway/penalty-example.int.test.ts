// examples/penalty-box.yaml exactly as shipped, through the real gateway with
// the demo upstream: the curl loop of its header comment, as a test.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { freePort } from '../helpers/ports.js';
import { call, silent } from '../helpers/gateway-support.js';

describe('examples/penalty-box.yaml', () => {
  it('five logins, four refusals, then blocked for 10 minutes: 429 blocked with Retry-After 600, and every request after it', async () => {
    const port = await freePort();
    const config = loadConfig('examples/penalty-box.yaml', { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}` });
    const app = await startSluice(config, { demoUpstream: { port }, logger: silent });
    try {
      const replies = [];
      for (let i = 0; i < 12; i++) replies.push(await call(`${app.url}/api/login`, { method: 'POST' }));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
      const errors = replies.slice(5).map((r) => JSON.parse(r.body).error);
      assert.deepEqual(errors, ['rate_limited', 'rate_limited', 'rate_limited', 'rate_limited', 'blocked', 'blocked', 'blocked']);
      assert.equal(JSON.parse(replies[9]!.body).retryAfterMs, 600_000);
      assert.equal(replies[9]!.headers['retry-after'], '600');
      for (const blocked of replies.slice(10)) assert.ok(Number(blocked.headers['retry-after']) > 500 && Number(blocked.headers['retry-after']) <= 600);
    } finally {
      await app.close();
    }
  });
});
