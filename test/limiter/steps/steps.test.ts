// Each step of the decision chain (src/limiter/steps/) alone, over a stub
// `next`: no store, no sockets. The chain as a whole: the other tests here.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Decision } from '../../../src/core/decision.js';
import { planFor } from '../../../src/limiter/engine/plan.js';
import { InstanceCount } from '../../../src/limiter/fallback/instances.js';
import { ChainStats } from '../../../src/limiter/metrics/stats.js';
import { type Call, compose, type Decide, type Reply, type Step } from '../../../src/limiter/steps/compose.js';
import { LeasingStep } from '../../../src/limiter/steps/leaser.js';
import { NegativeCache, negativeStep } from '../../../src/limiter/steps/negative-cache.js';
import { fallbackStep, type FallbackStepOptions, groupsStep, refundStep, storeTerminal, type StoreTerminalOptions } from '../../../src/limiter/steps/store-steps.js';
import { bucket } from '../../helpers/resilient-engine.js';

const decision = (allowed: boolean, extra: Partial<Decision> = {}): Decision => ({
  allowed,
  remaining: allowed ? 3 : 0,
  limit: 5,
  resetAfterMs: 1000,
  retryAfterMs: allowed ? 0 : 1000,
  delayMs: 0,
  source: 'redis',
  ...extra,
});
const call = (route: string, extra: Record<string, unknown> = {}, cost = 1): Call => ({ plan: planFor({ tag: 'shop', name: route }, bucket(5, 5, extra), 1), cost });

test('compose: the first step is outermost, the terminal last', async () => {
  const seen: string[] = [];
  const step = (name: string): Step => (next) => async (calls) => {
    seen.push(name);
    return next(calls);
  };
  const terminal: Decide = async () => {
    seen.push('terminal');
    return { admitted: true, decisions: [decision(true)] };
  };
  await compose(step('a'), step('b'))(terminal)([call('orders')]);
  assert.deepEqual(seen, ['a', 'b', 'terminal']);
});

test('negative cache step: a store refusal is answered locally until its retry time; other refusals are not cached', async () => {
  let now = 0;
  let calls = 0;
  let source: Decision['source'] = 'redis';
  const refusal = (): Decision => ({ allowed: false, remaining: 0, limit: 5, resetAfterMs: 1000, retryAfterMs: 1000, delayMs: 0, source });
  const step = negativeStep(new NegativeCache(10), () => now)(async () => {
    calls++;
    return { admitted: false, decisions: [refusal()] };
  });
  const decide = async (c: Call) => (await step([c])).decisions[0]!;
  const plan = call('orders');
  assert.equal((await decide(plan)).source, 'redis');
  assert.equal((await decide(plan)).source, 'cache');
  assert.equal(calls, 1, 'the second refusal cost no store call');
  now += 1000;
  assert.equal((await decide(plan)).source, 'redis', 'past the retry time the store is asked again');
  source = 'fallback';
  const other = call('other');
  await decide(other);
  await decide(other);
  assert.equal(calls, 4, 'a fallback refusal says nothing of the shared bucket');
});

test('negative cache step: several limits, one known refused: refused at once, the others not consulted; a shadow one is not looked up', async () => {
  const negative = new NegativeCache(10);
  let calls = 0;
  const step = negativeStep(negative, () => 0)(async (cs) => {
    calls++;
    return { admitted: true, decisions: cs.map(() => decision(true)) };
  });
  const [a, b, shadow] = [call('a'), call('b'), call('s', { shadow: true })];
  negative.add(b.plan.bucket.key, b.plan.fingerprint, 1, decision(false), 0);
  negative.add(shadow.plan.bucket.key, shadow.plan.fingerprint, 1, decision(false), 0);
  const refused = await step([a, b]);
  assert.equal(refused.admitted, false);
  assert.deepEqual(refused.consulted, [false, true]);
  assert.equal(refused.decisions[0]!.allowed, true, 'a placeholder, not charged');
  assert.equal(calls, 0);
  const admitted = await step([a, shadow]);
  assert.equal(admitted.admitted, true, "a shadow limit's cached refusal does not refuse the request");
  assert.equal(calls, 1);
  const lone = await step([shadow]);
  assert.equal(lone.decisions[0]!.source, 'cache', 'a lone shadow limit reports its would-be refusal');
  assert.equal(lone.admitted, true);
});

test('refund step: a refused request gives back what the store took, reports the units returned and forgets those buckets', async () => {
  const adjusted: [string, number][] = [];
  const forgotten: string[] = [];
  const step = refundStep({
    late: {
      adjust: async (bucket, _rule, delta) => {
        adjusted.push([bucket.key, delta]);
        return true;
      },
    },
    negative: { forget: (key) => forgotten.push(key) },
  });
  const [a, b] = [call('a', {}, 2), call('b')];
  const reply = await step(async () => ({ admitted: false, decisions: [decision(true), decision(false)], taken: [true, false] }))([a, b]);
  assert.deepEqual(adjusted, [[a.plan.bucket.key, -2]]);
  assert.deepEqual(forgotten, [a.plan.bucket.key]);
  assert.equal(reply.decisions[0]!.remaining, 5, '3 left, 2 given back');
  assert.equal(reply.decisions[1]!.remaining, 0);
  await step(async () => ({ admitted: true, decisions: [decision(true), decision(true)], taken: [true, true] }))([a, b]);
  assert.equal(adjusted.length, 1, 'an admitted request keeps what it took');
});

test('groups step: one call per group of the store, merged in the calls order; a failed group missed, its indexes the request', async () => {
  const sent: string[][] = [];
  const error = new Error('down');
  const calls = [call('a'), call('b'), call('c')];
  const step = groupsStep(() => [[0, 2], [1]])(async (group) => {
    sent.push(group.map((c) => c.plan.bucket.key));
    if (group.length === 1) return { admitted: true, decisions: [], missed: [{ indexes: [0], error }] };
    return { admitted: false, decisions: [decision(true), decision(false)] };
  });
  const reply = await step(calls);
  assert.deepEqual(sent, [[calls[0]!.plan.bucket.key, calls[2]!.plan.bucket.key], [calls[1]!.plan.bucket.key]]);
  assert.equal(reply.admitted, false);
  assert.deepEqual(reply.taken, [false, false, false], 'a refusing group took nothing');
  assert.deepEqual(reply.missed?.map((miss) => miss.indexes), [[1]]);
  assert.equal(reply.decisions[2]!.allowed, false);
  const lone: Reply = { admitted: true, decisions: [decision(true)] };
  assert.equal(await groupsStep(() => assert.fail('a lone call is not grouped'))(async () => lone)([calls[0]!]), lone);
});

function fallbackOptions(decided: Decision[][]): FallbackStepOptions {
  const storeDown = {
    degraded: () => decision(true, { source: 'fallback' }),
    storeDownDecision: (plan: Call['plan']) => (plan.original.onStoreDown === 'closed' ? decision(false, { source: 'closed' }) : undefined),
    fallbackRule: (plan: Call['plan']) => plan.rule,
    pendingMs: () => 0,
    pendingUnits: () => 0,
    reconcileLater: () => undefined,
  };
  const fallback = {
    decideAll: (calls: readonly unknown[]) => {
      const decisions = calls.map(() => decision(true, { source: 'fallback' }));
      decided.push(decisions);
      return { admitted: true, decisions };
    },
    peek: async () => decision(true, { source: 'fallback' }),
    unanswered: () => undefined,
  };
  return {
    storeDown: storeDown as unknown as FallbackStepOptions['storeDown'],
    fallback: fallback as unknown as FallbackStepOptions['fallback'],
    guard: { closed: true },
    debts: { owe: () => undefined },
    late: { watchAll: () => undefined },
    stats: new ChainStats(),
  };
}

test('fallback step: missed calls are decided by onStoreDown; several all or nothing, charged locally only when nothing else refused', async () => {
  const decided: Decision[][] = [];
  const step = fallbackStep(fallbackOptions(decided));
  const error = new Error('down');
  const lone = await step(async () => ({ admitted: true, decisions: [], missed: [{ indexes: [0], error }] }))([call('a')]);
  assert.equal(lone.decisions[0]!.source, 'fallback');
  const [a, b, closed] = [call('a'), call('b'), call('c', { onStoreDown: 'closed' })];
  const both = await step(async () => ({ admitted: true, decisions: [decision(true)], taken: [true, false], missed: [{ indexes: [1], error }] }))([a, b]);
  assert.equal(both.admitted, true);
  assert.deepEqual(both.decisions.map((d) => d.source), ['redis', 'fallback']);
  assert.deepEqual(both.taken, [true, false]);
  assert.equal(decided.length, 1);
  const refused = await step(async () => ({ admitted: false, decisions: [decision(false)], missed: [{ indexes: [1], error }] }))([a, b]);
  assert.equal(refused.admitted, false);
  assert.equal(decided.length, 1, 'refused by the store: the local limiter is only peeked');
  const shut = await step(async () => ({ admitted: true, decisions: [decision(true)], missed: [{ indexes: [1, 2], error }] }))([a, b, closed]);
  assert.equal(shut.admitted, false, 'a closed rule refuses the request');
  assert.equal(shut.decisions[2]!.source, 'closed');
  const passed: Reply = { admitted: true, decisions: [decision(true)] };
  assert.equal(await step(async () => passed)([a]), passed, 'nothing missed: the reply as is');
});

test('store terminal: an answer is remembered; a failure is no decision but `missed`', async () => {
  const remembered: string[] = [];
  let fail: Error | undefined;
  const guard = {
    opened: false,
    consume: async () => {
      if (fail) throw fail;
      return decision(true);
    },
    consumeAll: async (_plans: unknown, calls: readonly unknown[]) => ({ admitted: true, decisions: calls.map(() => decision(true)) }),
  };
  const options: StoreTerminalOptions = {
    guard: guard as unknown as StoreTerminalOptions['guard'],
    debts: { pay: () => undefined },
    fallback: {
      remember: (_key, bucket) => {
        remembered.push(bucket);
        return 0;
      },
    },
    late: { restore: () => undefined },
  };
  const terminal = storeTerminal(options);
  const [a, b] = [call('a'), call('b')];
  assert.equal((await terminal([a])).admitted, true);
  assert.equal((await terminal([a, b])).decisions.length, 2);
  assert.deepEqual(remembered, [a.plan.bucket.key, a.plan.bucket.key, b.plan.bucket.key]);
  fail = new Error('down');
  const missed = await terminal([a]);
  assert.deepEqual(missed.missed?.map((miss) => [miss.indexes, miss.error, miss.lateOne]), [[[0], fail, undefined]]);
});

test('leasing step: a lone leasing call is decided from its lease; several limits, a penalty box or a key that does not lease go on', async () => {
  let leases = 0;
  let nexts = 0;
  const leasing = new LeasingStep({
    below: {
      lease: async (_plan, _need, want) => {
        leases++;
        return { granted: want, remaining: 10, resetAfterMs: 0, retryAfterMs: 0 };
      },
      degraded: () => assert.fail('the store is up'),
    },
    canLease: () => true,
    negative: new NegativeCache(10),
    hotKey: { autoLeaseRatePerSec: 0, batch: 4, leaseTtlMs: 1000 },
    maxKeys: 10,
    now: () => 0,
    instances: new InstanceCount(1, { count: 1 }),
    stats: new ChainStats(),
  });
  const step = leasing.step(async (calls) => {
    nexts++;
    return { admitted: true, decisions: calls.map(() => decision(true)) };
  });
  const leased = call('leased', { lease: { batch: 4 } });
  for (let i = 0; i < 4; i++) assert.equal((await step([leased])).decisions[0]!.source, 'cache');
  assert.equal(leases, 1, 'one lease of 4 units');
  assert.equal(nexts, 0);
  await step([leased, call('other')]);
  await step([{ plan: { ...leased.plan, penalty: { threshold: 3, windowSeconds: 60, blockSeconds: 60 } as never }, cost: 1 }]);
  await step([call('plain')]);
  assert.equal(nexts, 3);
  assert.equal(leases, 1);
});
