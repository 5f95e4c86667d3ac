// A long stream costs no more memory than a short one: a 100 MB
// `text/event-stream` answer relayed through the real gateway with its usage
// read (a limit with `cost.from: { json: usage.total_tokens }`), the usage in
// its very last event still settled. Memory is what stays reachable: sampled
// during the stream after a full collection (gc exposed at run time), so
// garbage the relay leaves behind is not counted, and a reader that held the
// stream (or a growing part of it) would be.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import type { RunningSluice } from '../../src/app.js';
import { parseRule } from '../../src/policies/rule.js';
import { agent, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MiB = 1024 * 1024;
const TOKENS = 77;
const RULE = { policy: 'token_bucket', capacity: 1000, refillPerSecond: 0.001 } as const;

const YAML = `
routes:
  - id: stream
    methods: [POST]
    path: /v1/chat/completions
    upstream: \${UP}
    limits:
      - { id: s-tpm, key: tenant, rule: { policy: token_bucket, capacity: 1000, refillPerSecond: 0.001 }, cost: { estimate: 10, from: { json: usage.total_tokens } } }
tenants:
  keys: [{ key: key-stream-0001, tenant: small }, { key: key-stream-0002, tenant: large }]
`;

/** 64 KiB of ~1 KiB chunk events, written again and again (the upstream allocates nothing per write). */
function eventBlock(): Buffer {
  const content = 'x'.repeat(900);
  const event = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${content}"}}],"usage":null}\n\n`;
  return Buffer.from(event.repeat(Math.floor(65_536 / event.length)));
}

/** Answers a stream of about `x-stream-bytes` bytes of events, then the usage event and [DONE], minding backpressure. */
function streamUpstream(): Promise<TestUpstream> {
  const block = eventBlock();
  return startUpstream((req, res: ServerResponse) => {
    const total = Number(req.headers['x-stream-bytes']);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent += block.length;
          if (!res.write(block)) return void res.once('drain', pump);
        }
        res.end(`data: {"choices":[],"usage":{"total_tokens":${TOKENS}}}\n\ndata: [DONE]\n\n`);
      };
      pump();
    });
  });
}

/** Reachable heap and buffers after a full collection, now. */
function live(): number {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

describe('a 100 MB stream through the gateway with its usage read', () => {
  let upstream: TestUpstream;
  let app: RunningSluice;
  before(async () => {
    upstream = await streamUpstream();
    app = await startGateway(YAML, { UP: upstream.url });
  });
  after(async () => {
    await app?.close();
    await upstream?.close();
  });

  /** Streams `bytes` through the gateway, the client dropping each chunk; the most memory reachable above `base` meanwhile, and the bytes received. */
  async function streamed(apiKey: string, bytes: number): Promise<{ peak: number; received: number; last: string }> {
    const base = live();
    let peak = 0;
    const sampler = setInterval(() => {
      peak = Math.max(peak, live() - base);
    }, 100);
    try {
      const response = await request(`${app.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json', 'x-stream-bytes': String(bytes) },
        body: '{"stream":true}',
        dispatcher: agent,
      });
      assert.equal(response.statusCode, 200);
      let received = 0;
      let last = '';
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        received += chunk.length;
        last = (last + chunk.toString('latin1')).slice(-200);
      }
      peak = Math.max(peak, live() - base);
      return { peak, received, last };
    } finally {
      clearInterval(sampler);
    }
  }

  async function settledLeft(tenant: string): Promise<number> {
    const rule = parseRule(RULE);
    for (;;) {
      const left = Math.floor((await app.engine.peek({ tag: tenant, name: 's-tpm' }, rule)).remaining);
      if (left !== 1000 - 10) return left; // the estimate stays until the settle lands
      await sleep(10);
    }
  }

  it('memory reachable while 100 MB stream stays within a margin of a 2 MB stream; the usage of the last event is charged', async () => {
    const small = await streamed('key-stream-0001', 2 * MiB);
    assert.equal(await settledLeft('small'), 1000 - TOKENS);
    const large = await streamed('key-stream-0002', 100 * MiB);
    assert.ok(large.received > 100 * MiB, `the whole stream arrived (${large.received} bytes)`);
    assert.match(large.last, /"total_tokens":77\}\}\n\ndata: \[DONE\]\n\n$/, 'the usage event and [DONE] reached the client');
    // Generous: a relay or reader holding the stream would hold about 100 MiB.
    assert.ok(large.peak < small.peak + 16 * MiB, `reachable memory grew ${(large.peak / MiB).toFixed(1)} MiB over 100 MiB, ${(small.peak / MiB).toFixed(1)} MiB over 2 MiB`);
    assert.equal(await settledLeft('large'), 1000 - TOKENS, 'the usage after 100 MB was settled: the estimate 10 became 77');
  });
});
