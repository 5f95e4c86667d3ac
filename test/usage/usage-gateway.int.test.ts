// Limits priced by usage through the real gateway over HTTP, with an
// OpenAI-compatible upstream (src/demo/llm-upstream.ts): an estimate reserved
// before forwarding, the usage read from a header, a JSON body or the last
// event of a stream while it is relayed, the difference settled; bad usage
// charging the fallback, the client's answer untouched; counting by outcome.
// On the memory store and on a real redis-server.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { RunningSluice } from '../../src/app.js';
import { parseRule } from '../../src/policies/rule.js';
import { type LlmUpstream, startLlmUpstream } from '../../src/demo/llm-upstream.js';
import { bodyBucketName } from '../../src/usage/body-key.js';
import { usageSettlements } from '../../src/metrics/usage.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { agent, call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const SLOW = 'refillPerSecond: 0.001';
const COST = '{ estimate: { fromBody: max_tokens, default: 100 }, from: { json: usage.total_tokens }, fallback: 50 }';
const YAML = `
routes:
  - id: chat
    methods: [POST]
    path: /v1/chat/completions
    upstream: \${UP}
    limits:
      - { id: u-rpm, key: tenant, rule: { policy: token_bucket, capacity: 100, ${SLOW} }, count: { skipStatus: [5xx] } }
      - { id: u-tpm, key: tenant, rule: { policy: token_bucket, capacity: 1000, ${SLOW} }, cost: ${COST} }
      - { id: u-model, key: { body: model }, rule: { policy: token_bucket, capacity: 500, ${SLOW} }, cost: ${COST} }
  - id: chat-header
    methods: [POST]
    path: /v1/header/completions
    upstream: \${UP}
    limits:
      - { id: u-hdr, key: tenant, rule: { policy: token_bucket, capacity: 1000, ${SLOW} }, cost: { estimate: 100, from: { header: x-usage-tokens }, fallback: 70 } }
  - id: held
    methods: [POST]
    path: /v1/held/completions
    upstream: \${HELD}
    limits:
      - { id: u-held, key: tenant, rule: { policy: token_bucket, capacity: 1000, ${SLOW} }, cost: ${COST} }
  - id: login
    methods: [POST]
    path: /v1/login
    anonymous: true
    upstream: \${UP}
    limits:
      - { id: u-failed-logins, key: ip, rule: { policy: token_bucket, capacity: 3, ${SLOW} }, count: { status: [401, 403] } }
tenants:
  keys: [${Array.from({ length: 12 }, (_, i) => `{ key: key-usage-${String(i).padStart(4, '0')}, tenant: t${i} }`).join(', ')}]
`;
const key = (i: number) => ({ 'x-api-key': `key-usage-${String(i).padStart(4, '0')}`, 'content-type': 'application/json' });
const rule = (capacity: number) => parseRule({ policy: 'token_bucket', capacity, refillPerSecond: 0.001 });

/** Settlements counted so far, per limit id. */
async function settledCounts(): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const value of (await usageSettlements.get()).values) counts.set(String(value.labels.limit), (counts.get(String(value.labels.limit)) ?? 0) + value.value);
  return counts;
}

/**
 * Waits (no deadline of its own: the runner's timeout is the bound) until each of `limits` has `n` more settlements than in
 * `from`. Counted per limit, because a total lets an earlier request's straggling settlement stand in for this one's.
 */
async function settled(from: Map<string, number>, limits: readonly string[], n = 1): Promise<void> {
  const done = (counts: Map<string, number>) => limits.every((limit) => (counts.get(limit) ?? 0) >= (from.get(limit) ?? 0) + n);
  while (!done(await settledCounts())) await sleep(5);
}

const CHAT = ['u-rpm', 'u-tpm', 'u-model'];

for (const store of ['memory', 'redis'] as const) {
  describe(`limits priced by usage through the gateway (${store})`, () => {
    let llm: LlmUpstream;
    let held: TestUpstream;
    let release: () => void = () => undefined;
    let redis: RedisServer | undefined;
    let app: RunningSluice;
    before(async () => {
      llm = await startLlmUpstream();
      held = await startUpstream((req, res: ServerResponse) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: {"choices":[{"delta":{"content":"first"}}],"usage":null}\n\n');
          release = () => res.end('data: {"choices":[],"usage":{"total_tokens":7}}\n\ndata: [DONE]\n\n');
        });
      });
      const env: Record<string, string> = { UP: llm.url, HELD: held.url };
      if (store === 'redis') {
        redis = await startRedis();
        env.SLUICE_REDIS_URL = redis.url;
        env.SLUICE_STORE_DEADLINE_MS = '2000';
      }
      app = await startGateway(YAML, env);
    });
    after(async () => {
      await app?.close();
      await llm?.close();
      await held?.close();
      await redis?.stop();
    });

    const left = async (tag: string, name: string, capacity: number) => (await app.engine.peek({ tag, name }, rule(capacity))).remaining;
    const modelName = (_tenant: string, model: string) => bodyBucketName({ model }, ['model'], 'u-model')!;

    it('a JSON answer: max_tokens reserved, usage.total_tokens settled per tenant and per tenant × model; the body as the upstream sent it', async () => {
      const from = await settledCounts();
      const reply = await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers: key(0), body: JSON.stringify({ model: 'small', max_tokens: 200, test_usage: 30 }) });
      assert.equal(reply.status, 200);
      assert.equal(JSON.parse(reply.body).usage.total_tokens, 30);
      // The answer's headers tell what the reservation left: 1000 - 200.
      assert.match(String(reply.headers['x-ratelimit-remaining']), /^\d+$/);
      await settled(from, CHAT);
      assert.equal(await left('t0', 'u-tpm', 1000), 970);
      assert.equal(await left('t0', modelName('t0', 'small'), 500), 470);
      assert.equal(await left('t0', modelName('t0', 'large'), 500), 500, 'another model has its own bucket');
      assert.equal(await left('t0', 'u-rpm', 100), 99);
    });

    it('a streamed answer: the usage of its last event settled, every event relayed unchanged', async () => {
      const from = await settledCounts();
      const reply = await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers: key(1), body: JSON.stringify({ model: 'small', max_tokens: 300, stream: true, test_usage: 45 }) });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['content-type'], 'text/event-stream');
      const events = reply.body.split('\n\n').filter((e) => e !== '');
      assert.equal(events.length, 16 + 2);
      assert.equal(events.at(-1), 'data: [DONE]');
      assert.equal(JSON.parse(events.at(-2)!.slice(6)).usage.total_tokens, 45);
      await settled(from, CHAT);
      assert.equal(await left('t1', 'u-tpm', 1000), 955);
    });

    it('a stream reaches the client event by event: the first arrives while the upstream still holds the rest', async () => {
      const from = await settledCounts();
      const response = await request(`${app.url}/v1/held/completions`, { method: 'POST', headers: key(2), body: JSON.stringify({ max_tokens: 40 }), dispatcher: agent });
      const reader = response.body[Symbol.asyncIterator]();
      const first = await reader.next();
      assert.match(String(first.value), /first/);
      release(); // only now does the upstream send its usage and end
      let rest = '';
      for (let next = await reader.next(); !next.done; next = await reader.next()) rest += String(next.value);
      assert.match(rest, /\[DONE\]/);
      await settled(from, ['u-held']);
      assert.equal(await left('t2', 'u-held', 1000), 993);
    });

    it('the usage from a response header', async () => {
      const from = await settledCounts();
      const reply = await call(`${app.url}/v1/header/completions`, { method: 'POST', headers: key(3), body: JSON.stringify({ test_usage: 12 }) });
      assert.equal(reply.status, 200);
      await settled(from, ['u-hdr']);
      assert.equal(await left('t3', 'u-hdr', 1000), 988);
    });

    it('an estimate the limit cannot cover is refused with 429 before it reaches the upstream', async () => {
      const from = await settledCounts();
      assert.equal((await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers: key(4), body: JSON.stringify({ model: 'm', max_tokens: 10, test_usage: 480 }) })).status, 200);
      await settled(from, CHAT);
      const before = llm.answered;
      const refused = await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers: key(4), body: JSON.stringify({ model: 'm', max_tokens: 100 }) });
      assert.equal(refused.status, 429);
      assert.equal(llm.answered, before, 'never forwarded');
      assert.equal(await left('t4', modelName('t4', 'm'), 500), 20);
    });

    for (const [i, [what, test]] of ([
      ['missing', { test_usage: 'omit' }],
      ['negative', { test_usage: -5 }],
      ['not a number', { test_usage: 'abc' }],
      ['above the limit', { test_usage: 5000 }],
      ['a stream cut before its usage', { stream: true, test_usage: 20, test_cut: true }],
    ] as const).entries()) {
      it(`usage ${what}: the fallback is charged and counted, the client's answer unchanged`, async () => {
        const from = await settledCounts();
        const reply = await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers: key(5 + i), body: JSON.stringify({ model: 'x', max_tokens: 200, ...test }) }).catch((error: Error) => ({ status: -1, body: error.message, headers: {} }));
        if ('test_cut' in test) assert.notEqual(reply.status, 429);
        else {
          assert.equal(reply.status, 200);
          const body = JSON.parse(reply.body);
          if (test.test_usage === 'omit') assert.equal(body.usage, undefined);
          else assert.deepEqual(body.usage.total_tokens, test.test_usage);
        }
        await settled(from, CHAT);
        assert.equal(await left(`t${5 + i}`, 'u-tpm', 1000), 950);
        const fallbacks = (await usageSettlements.get()).values.filter((v) => v.labels.limit === 'u-tpm' && String(v.labels.result).startsWith('fallback_'));
        assert.ok(fallbacks.length > 0);
      });
    }

    it('count by outcome: only 401 and 403 count against failed logins; a 5xx is not counted against requests a minute', async () => {
      for (let n = 0; n < 5; n++) {
        const from = await settledCounts();
        assert.equal((await call(`${app.url}/v1/login`, { method: 'POST', body: '{}' })).status, 200);
        await settled(from, ['u-failed-logins']);
      }
      for (let n = 0; n < 3; n++) {
        const from = await settledCounts();
        assert.equal((await call(`${app.url}/v1/login`, { method: 'POST', body: JSON.stringify({ test_status: n === 0 ? 403 : 401 }) })).status, n === 0 ? 403 : 401);
        await settled(from, ['u-failed-logins']);
      }
      assert.equal((await call(`${app.url}/v1/login`, { method: 'POST', body: '{}' })).status, 429);

      const from = await settledCounts();
      assert.equal((await call(`${app.url}/v1/chat/completions`, { method: 'POST', headers: key(11), body: JSON.stringify({ model: 'x', test_status: 503 }) })).status, 503);
      await settled(from, CHAT);
      assert.equal(await left('t11', 'u-rpm', 100), 100, 'the 503 was refunded');
    });
  });
}
