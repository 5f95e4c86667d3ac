// Settling reservations on the memory store, without a socket: each way a
// usage value can be bad charges the fallback; count rules refund; a failing
// store is counted, never thrown; the library's reserve → settle.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRule } from '../../src/policies/rule.js';
import { createLimiter } from '../../src/limiter/engine/create-limiter.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import type { RequestLimit } from '../../src/request-limits/types.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { usageSettleFailures } from '../../src/metrics/usage.js';
import { Settlement } from '../../src/usage/settlement.js';
import { judgeUsage } from '../../src/usage/usage-value.js';

const rule = parseRule({ policy: 'token_bucket', capacity: 1000, refillPerSecond: 0.001 });
const now = () => 1_000_000;
const limit: RequestLimit = {
  limitId: 'tpm',
  bucket: { tag: 'acme', name: 'tpm' },
  rule,
  cost: 200,
  usage: { estimate: { fixed: 200 }, from: { kind: 'json', path: ['usage', 'total_tokens'] }, fallback: 50 },
};
const JSON_HEAD = ['content-type', 'application/json'];

async function settleWith(body: string, end = { status: 200, complete: true, aborted: false }, head: string[] | null = JSON_HEAD): Promise<number> {
  const engine = new StoreEngine(new MemoryStore({ now }));
  const decision = await engine.decide({ tag: 'acme', name: 'tpm' }, rule, 200);
  const settlement = Settlement.of(engine, [limit], [decision])!;
  if (head) settlement.reader.head(end.status, head);
  settlement.reader.data(Buffer.from(body));
  await settlement.settle(end);
  return (await engine.peek({ tag: 'acme', name: 'tpm' }, rule)).remaining;
}

describe('settling a reservation', () => {
  it('charges the usage: a smaller one refunds, a larger one charges the difference', async () => {
    assert.equal(await settleWith('{"usage":{"total_tokens":30}}'), 970);
    assert.equal(await settleWith('{"usage":{"total_tokens":900}}'), 100);
  });

  for (const [what, body] of [
    ['missing', '{"usage":{}}'],
    ['not JSON', '{"usage":'],
    ['negative', '{"usage":{"total_tokens":-3}}'],
    ['not a number', '{"usage":{"total_tokens":"many"}}'],
    ['above the capacity', '{"usage":{"total_tokens":1001}}'],
  ]) {
    it(`usage ${what}: the fallback`, async () => assert.equal(await settleWith(body!), 950));
  }

  it('a body cut before its end: the fallback; no upstream answer at all: refunded', async () => {
    assert.equal(await settleWith('{"usage":{"total_tokens":30}}', { status: 200, complete: false, aborted: false }), 950);
    assert.equal(await settleWith('', { status: 502, complete: false, aborted: false }, null), 1000);
  });

  it('judges values: fractions round up, numeric header text is read', () => {
    assert.deepEqual(judgeUsage(2.1, 10), { units: 3 });
    assert.deepEqual(judgeUsage(' 7 ', 10), { units: 7 });
    assert.deepEqual(judgeUsage(Number.NaN, 10), { bad: 'not_a_number' });
  });

  it('a store failing the settle is counted, not thrown', async () => {
    const engine = { adjust: () => Promise.reject(new Error('down')) };
    const decision = await new StoreEngine(new MemoryStore({ now })).decide({ tag: 'acme', name: 'tpm' }, rule, 200);
    const settlement = Settlement.of(engine, [limit], [decision])!;
    settlement.reader.head(200, JSON_HEAD);
    const before = (await usageSettleFailures.get()).values.reduce((sum, v) => sum + v.value, 0);
    await settlement.settle({ status: 200, complete: true, aborted: false });
    const after = (await usageSettleFailures.get()).values.reduce((sum, v) => sum + v.value, 0);
    assert.equal(after, before + 1);
  });
});

describe('limiter.reserve(key, estimate) → settle(actual)', () => {
  it('refunds or charges the difference as a debt; a refused reservation settles nothing', async () => {
    const limiter = createLimiter({ id: 'llm', policy: 'token_bucket', capacity: 100, refillPerSecond: 0.001 }, new MemoryStore({ now }));
    const first = await limiter.reserve('user-1', 60);
    assert.equal(first.decision.remaining, 40);
    await first.settle(10);
    assert.equal((await limiter.peek('user-1')).remaining, 90);
    const second = await limiter.reserve('user-1', 80);
    await second.settle(150); // 70 more than reserved: past empty, a debt
    assert.equal((await limiter.peek('user-1')).remaining, 0);
    const refused = await limiter.reserve('user-1', 10);
    assert.equal(refused.decision.allowed, false);
    await refused.settle(0);
    await assert.rejects(first.settle(1), /already settled/);
    await assert.rejects((await limiter.reserve('user-2', 1)).settle(-1), /at least 0/);
  });
});
