// Request-path counts and histogram observations kept as numbers until the registry is read
// (src/metrics/batched-counts.ts): every read sees every count once, a label
// set bound twice (a reload) is one series, and the gateway's own counters
// reach a scrape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { CounterBatch, HistogramBatch } from '../../src/metrics/batched-counts.js';
import { LimitCounters } from '../../src/metrics/limit-decisions.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';

function counted(): { registry: Registry; batch: CounterBatch<'route' | 'outcome'>; counter: Counter<'route' | 'outcome'> } {
  const registry = new Registry();
  const batch = new CounterBatch<'route' | 'outcome'>();
  const counter = new Counter({
    name: 'test_batched_total',
    help: 'test',
    labelNames: ['route', 'outcome'] as const,
    registers: [registry],
    collect() {
      batch.flush(this);
    },
  });
  return { registry, batch, counter };
}

test('counts reach every read, each once', async () => {
  const { registry, batch, counter } = counted();
  const ok = batch.bind({ route: 'orders', outcome: 'ok' });
  for (let i = 0; i < 5; i++) ok.inc();
  assert.match(await registry.metrics(), /test_batched_total\{route="orders",outcome="ok"\} 5\n/);
  assert.match(await registry.metrics(), /test_batched_total\{route="orders",outcome="ok"\} 5\n/, 'a second read adds nothing');
  ok.inc();
  const values = (await counter.get()).values;
  assert.deepEqual(values.map((v) => [v.labels, v.value]), [[{ route: 'orders', outcome: 'ok' }, 6]]);
});

test('the same label set bound twice (in any key order) is one series', async () => {
  const { registry, batch } = counted();
  batch.bind({ route: 'orders', outcome: 'ok' }).inc();
  batch.bind({ outcome: 'ok', route: 'orders' }).inc();
  batch.bind({ route: 'orders', outcome: 'retried' }).inc();
  const text = await registry.metrics();
  assert.match(text, /\{route="orders",outcome="ok"\} 2\n/);
  assert.match(text, /\{route="orders",outcome="retried"\} 1\n/);
});

test("a limit's decisions reach the admin registry when it is read", async () => {
  const counters = new LimitCounters('batched-test-limit');
  counters.count('allowed');
  counters.count('allowed');
  counters.count('limited');
  const text = await resilienceRegistry.getSingleMetricAsString('sluice_limit_decisions_total');
  assert.match(text, /sluice_limit_decisions_total\{limit="batched-test-limit",outcome="allowed"\} 2\n/);
  assert.match(text, /sluice_limit_decisions_total\{limit="batched-test-limit",outcome="limited"\} 1(\n|$)/);
});

test('a batched histogram reads exactly as prom-client observing each value', async () => {
  const bounds = [0.001, 0.01, 0.1, 1];
  const registry = new Registry();
  const batch = new HistogramBatch<'route'>(bounds);
  new Histogram({ name: 'test_batched_seconds', help: 'test', labelNames: ['route'] as const, buckets: bounds, registers: [registry], collect() { batch.flush(this); } });
  const plain = new Histogram({ name: 'test_plain_seconds', help: 'test', labelNames: ['route'] as const, buckets: bounds, registers: [registry] });
  const values = [0.0005, 0.001, 0.003, 0.05, 0.05, 0.7, 1, 2.5, 30];
  const batched = batch.bind({ route: 'orders' });
  const read = async () => (await registry.metrics()).split('\n').filter((line) => !line.startsWith('#'));
  const compare = async () => {
    const lines = await read();
    const of = (name: string) => lines.filter((line) => line.startsWith(name)).map((line) => line.slice(name.length)).sort();
    assert.deepEqual(of('test_batched_seconds'), of('test_plain_seconds'));
  };
  for (const value of values.slice(0, 4)) {
    batched.observe(value);
    plain.labels('orders').observe(value);
  }
  await compare();
  for (const value of values.slice(4)) {
    batched.observe(value);
    plain.labels('orders').observe(value);
  }
  await compare(); // the second flush adds to the first
  await compare(); // and a read with nothing pending adds nothing
  assert.match((await read()).join('\n'), /test_batched_seconds_count\{route="orders"\} 9/);
});
