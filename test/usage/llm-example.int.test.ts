// examples/llm-tokens.yaml exactly as shipped, through the real gateway with
// the demo upstream (which answers POST /v1/ as an OpenAI-compatible API):
// tokens a minute, a day and per model settled from the JSON body and from a
// stream's last event.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RunningSluice, startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { parseRule } from '../../src/policies/rule.js';
import { usageSettlements } from '../../src/metrics/usage.js';
import { freePort } from '../helpers/ports.js';
import { call, silent } from '../helpers/gateway-support.js';

const total = async () => (await usageSettlements.get()).values.reduce((sum, value) => sum + value.value, 0);

describe('examples/llm-tokens.yaml', () => {
  it('a JSON and a streamed completion: each settles what its usage says against tokens a minute and a day', async () => {
    const port = await freePort();
    const config = loadConfig('examples/llm-tokens.yaml', { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: `http://127.0.0.1:${port}` });
    const app: RunningSluice = await startSluice(config, { demoUpstream: { port }, logger: silent });
    try {
      const headers = { 'x-api-key': 'demo-llm-key', 'content-type': 'application/json' };
      const from = await total();
      const json = await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'small', max_tokens: 500, messages: [{ role: 'user', content: 'hi' }] }) });
      assert.equal(json.status, 200);
      const used = JSON.parse(json.body).usage.total_tokens as number;
      const streamed = await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'small', max_tokens: 500, stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
      assert.equal(streamed.status, 200);
      assert.match(streamed.body, /data: \[DONE\]\n\n$/);
      while ((await total()) < from + 8) await sleep(5); // 4 limits × 2 requests
      const daily = await app.engine.peek({ tag: 'demo-llm', name: 'llm-tpd' }, parseRule({ policy: 'fixed_window', limit: 200000, windowMs: 86400000 }));
      assert.equal(daily.remaining, 200000 - 2 * used, 'each answer charged its usage, not its max_tokens');
    } finally {
      await app.close();
    }
  });
});
