// The engine's own steps, each alone over a stub `next` (the penalty step, the
// dashboard's observer, the outcome that applies shadow mode), the chain they
// make (RequestChain), and the plain engine's shadow outcomes: no store
// process, no sockets.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Decision } from '../../../src/core/decision.js';
import { parseRule, type Rule } from '../../../src/policies/rule.js';
import { DecisionStats } from '../../../src/dashboard/decision-stats.js';
import { observerStep } from '../../../src/dashboard/engine-observer.js';
import { verdictOf } from '../../../src/gateway/request-observer.js';
import { StoreEngine } from '../../../src/limiter/engine/engine.js';
import { type Plan, planFor } from '../../../src/limiter/engine/plan.js';
import { type Call, type Decide, outcomeOf, penaltyStep, type Reply, RequestChain, type Step } from '../../../src/limiter/steps/compose.js';
import type { PenaltyConfig } from '../../../src/policies/penalty/model.js';
import { MemoryStore } from '../../../src/stores/memory-store.js';

const rule = (extra: Record<string, unknown> = {}): Rule => parseRule({ policy: 'token_bucket', capacity: 5, refillPerSecond: 5, ...extra });
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
const PENALTY: PenaltyConfig = { after: 3, withinMs: 10_000, blockMs: 1000, backoff: 2, maxMs: 60_000, forgiveAfterMs: 60_000 };
const call = (route: string, extra: Record<string, unknown> = {}, penalty?: typeof PENALTY): Call => {
  const plan: Plan = planFor({ tag: 'shop', name: route }, rule(extra), 1);
  return { plan: penalty ? { ...plan, penalty } : plan, cost: 1 };
};

test('penalty step: the penalized limits first, each alone; a refusal there consults no other limit', async () => {
  const sent: string[][] = [];
  const refunded: string[] = [];
  const next: Decide = async (calls) => {
    sent.push(calls.map((c) => c.plan.bucket.name));
    return { admitted: calls[0]!.plan.bucket.name !== 'boxed', decisions: calls.map((c) => decision(c.plan.bucket.name !== 'boxed')) };
  };
  const step = penaltyStep(async (c) => {
    refunded.push(c.plan.bucket.name);
  })(next);
  const reply = await step([call('a'), call('boxed', {}, PENALTY), call('b')]);
  assert.deepEqual(sent, [['boxed']], 'the others are not sent');
  assert.equal(reply.admitted, false);
  assert.deepEqual(reply.consulted, [false, true, false]);
  assert.equal(reply.decisions[0]!.source, 'cache');
  assert.deepEqual(refunded, []);
});

test('penalty step: the others refuse: what the penalized limit took is given back and reported; no box or a lone limit passes untouched', async () => {
  const sent: string[][] = [];
  const refunded: string[] = [];
  const next: Decide = async (calls) => {
    sent.push(calls.map((c) => c.plan.bucket.name));
    const refused = calls.some((c) => c.plan.bucket.name === 'strict');
    return { admitted: !refused, decisions: calls.map((c) => decision(c.plan.bucket.name !== 'strict')) };
  };
  const step = penaltyStep(async (c) => {
    refunded.push(c.plan.bucket.name);
  })(next);
  const reply = await step([call('boxed', {}, PENALTY), call('strict'), call('other')]);
  assert.deepEqual(sent, [['boxed'], ['strict', 'other']]);
  assert.equal(reply.admitted, false);
  assert.deepEqual(refunded, ['boxed']);
  assert.equal(reply.decisions[0]!.remaining, 4, 'the boxed limit reports the unit given back');
  assert.equal(reply.consulted, undefined, 'every limit was consulted');
  sent.length = 0;
  await step([call('a'), call('b')]);
  await step([call('boxed', {}, PENALTY)]);
  assert.deepEqual(sent, [['a', 'b'], ['boxed']], 'untouched: one call down each');
});

test('penalty step: a failed refund leaves the units taken and the request refused', async () => {
  const next: Decide = async (calls) => ({ admitted: calls.length === 1, decisions: calls.map((c) => decision(calls.length === 1 || c.plan.bucket.name !== 'strict')) });
  const reply = await penaltyStep(() => Promise.reject(new Error('down')))(next)([call('boxed', {}, PENALTY), call('strict'), call('x')]);
  assert.equal(reply.admitted, false);
});

test('observer step: records every limit as enforced (a shadow refusal as one), by tag and name, and returns the reply untouched', async () => {
  const stats = new DecisionStats(5_000);
  const reply: Reply = { admitted: true, decisions: [decision(true), decision(false)] };
  const step = observerStep(stats, () => 5_000)(async () => reply);
  const got = await step([call('orders'), call('search', { shadow: true })]);
  assert.equal(got, reply, 'the same reply object: nothing copied');
  const view = stats.view(5_000);
  assert.equal(view.routes.orders?.allowed.at(-1), 1);
  assert.equal(view.routes.search?.shadowRefused.at(-1), 1);
  assert.deepEqual(view.shadowTop, [{ tenant: 'shop', route: 'search', count: 1 }]);
  assert.deepEqual(view.top, []);
});

test('outcome: shadow applied once, per limit; `enforced` is the reply as decided, for one limit as for several', () => {
  const lone = outcomeOf([call('a', { shadow: true })], { admitted: true, decisions: [decision(false)] });
  assert.equal(lone.allowed, true);
  assert.equal(lone.decisions[0]!.allowed, true);
  assert.equal(lone.decisions[0]!.shadowRefused, true);
  assert.equal(lone.decisions[0]!.source, 'shadow');
  assert.equal(lone.enforced?.[0]?.allowed, false);
  const plain = outcomeOf([call('a'), call('b')], { admitted: false, decisions: [decision(true), decision(false)], consulted: [false, true] });
  assert.equal(plain.governing, 1);
  assert.equal(plain.decisions, plain.enforced, 'no shadow limit: no copy');
  assert.deepEqual(plain.consulted, [false, true]);
});

test('request chain: steps added with `use` wrap the base, the last outermost; a bad rule rejects, naming `rule` alone and `calls.N.rule` among several', async () => {
  const seen: string[] = [];
  const named = (name: string): Step => (next) => (calls) => {
    seen.push(name);
    return next(calls);
  };
  const chain = new RequestChain(async (calls) => ({ admitted: true, decisions: calls.map(() => decision(true)) }), (bucket, r) => planFor(bucket, r, 1));
  chain.use(named('observer'));
  chain.use(named('tracing'));
  const outcome = await chain.decide([{ bucket: { tag: 't', name: 'r' }, rule: rule(), cost: 1 }]);
  assert.equal(outcome.allowed, true);
  assert.deepEqual(seen, ['tracing', 'observer']);
  const bad = { policy: 'token_bucket', capacity: 5 } as unknown as Rule;
  const lone = chain.decide([{ bucket: { tag: 't', name: 'r' }, rule: bad, cost: 1 }]);
  assert.ok(lone instanceof Promise, 'a rejection, not a throw');
  await assert.rejects(lone, (error: Error) => error.message.includes('rule.refillPerSecond') && !error.message.includes('calls.'));
  await assert.rejects(chain.decide([{ bucket: { tag: 't', name: 'a' }, rule: rule(), cost: 1 }, { bucket: { tag: 't', name: 'r' }, rule: bad, cost: 1 }]), /calls\.1\.rule\.refillPerSecond/);
});

test('a lone shadow limit: its outcome carries `enforced` as several limits do (the gateway counts its would-be refusal)', async () => {
  const engine = new StoreEngine(new MemoryStore());
  const shadow = rule({ capacity: 1, refillPerSecond: 0.001, shadow: true });
  await engine.decideAll([{ bucket: { tag: 't', name: 'r' }, rule: shadow, cost: 1 }]);
  const lone = await engine.decideAll([{ bucket: { tag: 't', name: 'r' }, rule: shadow, cost: 1 }]);
  assert.equal(lone.allowed, true);
  assert.equal(lone.decisions[0]!.shadowRefused, true);
  assert.equal(lone.enforced?.[0]?.allowed, false);
  assert.equal(verdictOf(lone), 2, 'admitted although a shadow limit would have refused');
  await engine.close();
});

test('several limits, a shadow one `onStoreDown: closed`, the store down: the request is admitted (a shadow limit never refuses)', async () => {
  const store = new MemoryStore();
  const down = () => Promise.reject(new Error('store down'));
  Object.assign(store, { consume: down, consumeAll: down });
  const engine = new StoreEngine(store);
  const outcome = await engine.decideAll([
    { bucket: { tag: 't', name: 'open' }, rule: rule({ onStoreDown: 'open' }), cost: 1 },
    { bucket: { tag: 't', name: 'watched' }, rule: rule({ onStoreDown: 'closed', shadow: true }), cost: 1 },
  ]);
  assert.equal(outcome.allowed, true);
  assert.equal(outcome.decisions[1]!.shadowRefused, true);
  assert.equal(outcome.enforced?.[1]?.source, 'closed');
  const lone = await engine.decideAll([{ bucket: { tag: 't', name: 'watched' }, rule: rule({ onStoreDown: 'closed', shadow: true }), cost: 1 }]);
  assert.equal(lone.allowed, true);
  await engine.close();
});
