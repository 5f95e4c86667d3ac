// A request's limits when one carries a penalty box (limiter/engine/engine.ts)
// on the memory store, with a clock the test moves: a blocked key consults and
// charges no other limit; a request refused by another limit gives back what
// the penalized one took and counts nothing in its box. The negative cache
// keeps a block for at most BLOCK_CACHE_MS; the 429 of a block says so.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../src/core/decision.js';
import { parseRule } from '../../../src/policies/rule.js';
import { rejectionOf } from '../../../src/http/headers.js';
import { StoreEngine } from '../../../src/limiter/engine/engine.js';
import { BLOCK_CACHE_MS, NegativeCache } from '../../../src/limiter/steps/negative-cache.js';
import { parsePenalty } from '../../../src/policies/penalty/config.js';
import { MemoryStore } from '../../../src/stores/memory-store.js';

const boxedRule = parseRule({ policy: 'token_bucket', capacity: 2, refillPerSecond: 0.01 });
const wideRule = parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 0.001 });
const penalty = parsePenalty({ after: 2, withinMs: 60_000, blockMs: 600_000, backoff: 2 }, 'penalty');

function setup() {
  let now = 1_700_000_000_000;
  const store = new MemoryStore({ now: () => now });
  const engine = new StoreEngine(store);
  const calls = (wide = wideRule) => [
    { bucket: { tag: 'acme', name: 'login' }, rule: boxedRule, cost: 1, penalty },
    { bucket: { tag: 'acme', name: 'all' }, rule: wide, cost: 1 },
  ];
  return { engine, store, calls, tick: (ms: number) => (now += ms), peekWide: () => store.peekSync('rl:{acme}:all', wideRule) };
}

describe('several limits, one with a penalty box (memory store)', () => {
  it('blocks after `after` refusals; a blocked request consults no other limit and charges nothing', async () => {
    const { engine, calls, peekWide } = setup();
    for (let i = 0; i < 2; i++) assert.equal((await engine.decideAll(calls())).allowed, true);
    const refused = await engine.decideAll(calls());
    assert.equal(refused.allowed, false);
    assert.equal(refused.decisions[0]!.blockedUntilMs, undefined);
    assert.deepEqual(refused.consulted, [true, false], 'the other limit is not consulted when the boxed one refuses');
    const blocking = await engine.decideAll(calls());
    assert.equal(blocking.decisions[0]!.retryAfterMs, 600_000);
    assert.ok(blocking.decisions[0]!.blockedUntilMs! > 0);
    for (let i = 0; i < 3; i++) {
      const blocked = await engine.decideAll(calls());
      assert.equal(blocked.allowed, false);
      assert.equal(blocked.governing, 0);
      assert.equal(blocked.decisions[0]!.blockedUntilMs, blocking.decisions[0]!.blockedUntilMs);
    }
    assert.equal(peekWide().remaining, 8, 'the other limit took only the two admitted requests');
    assert.equal((await engine.listBlocked()).length, 1);
  });

  it('a request refused by the other limit gives back what the boxed one took, and counts nothing in the box', async () => {
    const { engine, store, calls } = setup();
    const tight = parseRule({ policy: 'token_bucket', capacity: 1, refillPerSecond: 0.001 });
    assert.equal((await engine.decideAll(calls(tight))).allowed, true);
    for (let i = 0; i < 5; i++) {
      const refused = await engine.decideAll(calls(tight));
      assert.equal(refused.allowed, false);
      assert.equal(refused.governing, 1, 'the other limit refused');
      assert.equal(refused.decisions[0]!.remaining, 1, 'the boxed limit reports its unit given back');
    }
    assert.equal(store.peekSync('rl:{acme}:login', boxedRule).remaining, 1, 'refunded every time');
    assert.deepEqual(await engine.listBlocked(), [], 'no refusal of the boxed limit, no block');
  });

  it('a lift lets the key in and forgives the level: the next block is the first length again', async () => {
    const { engine, calls, tick } = setup();
    for (let i = 0; i < 4; i++) await engine.decideAll(calls());
    const [block] = await engine.listBlocked();
    assert.equal(await engine.liftBlock(block!.key), true);
    assert.equal(await engine.liftBlock(block!.key), false);
    tick(1_000_000); // the bucket refills
    for (let i = 0; i < 2; i++) assert.equal((await engine.decideAll(calls())).allowed, true);
    await engine.decideAll(calls());
    assert.equal((await engine.decideAll(calls())).decisions[0]!.retryAfterMs, 600_000);
  });
});

describe('a block in the negative cache and in the 429', () => {
  const blocked: Decision = { allowed: false, remaining: 0, limit: 2, resetAfterMs: 1000, retryAfterMs: 600_000, delayMs: 0, source: 'redis', blockedUntilMs: 1_700_000_600_000 };

  it('is remembered for at most BLOCK_CACHE_MS, for any cost, with the time left to its end', () => {
    const cache = new NegativeCache(10);
    cache.addBlock('rl:{a}:b', 'f', blocked, 0);
    const hit = cache.get('rl:{a}:b', 'f', 2, BLOCK_CACHE_MS / 2);
    assert.equal(hit?.blockedUntilMs, blocked.blockedUntilMs);
    assert.equal(hit?.retryAfterMs, 600_000 - BLOCK_CACHE_MS / 2);
    assert.equal(cache.get('rl:{a}:b', 'f', 1, BLOCK_CACHE_MS), undefined, 'asked again of the store: a lift elsewhere is seen');
  });

  it('answers {"error":"blocked"} with retryAfterMs and blockedUntilMs, Retry-After to the block end', () => {
    const { headers, body } = rejectionOf([{ limitId: 'login', rule: boxedRule, decision: blocked }], 0, { ietf: false, problemJson: false });
    assert.deepEqual(JSON.parse(body), { error: 'blocked', retryAfterMs: 600_000, blockedUntilMs: 1_700_000_600_000 });
    const at = (name: string) => headers[headers.indexOf(name) + 1];
    assert.equal(at('Retry-After'), '600');
    assert.equal(at('X-RateLimit-Reset'), '600');
    const problem = rejectionOf([{ limitId: 'login', rule: boxedRule, decision: blocked }], 0, { ietf: false, problemJson: true });
    assert.equal(JSON.parse(problem.body).error, 'blocked');
  });
});
