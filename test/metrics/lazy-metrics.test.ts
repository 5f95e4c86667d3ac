// The resilience counters count before prom-client is loaded (a library that
// never scrapes never loads it); what they counted must be in the first scrape.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { lazyCounter, lazyRegistry } from '../../src/metrics/lazy-metrics.js';

test('increments made before the registry exists are in its first scrape, by label', async () => {
  const registry = lazyRegistry();
  const bySource = lazyCounter(registry, { name: 'probe_decisions_total', help: 'probe', labelNames: ['source'] as const });
  const units = lazyCounter(registry, { name: 'probe_units_total', help: 'probe' });
  bySource.inc({ source: 'fallback' });
  bySource.inc({ source: 'fallback' }, 2);
  bySource.inc({ source: 'open' });
  units.inc(5);
  units.inc();
  const text = await registry.metrics();
  assert.match(text, /probe_decisions_total\{source="fallback"\} 3/);
  assert.match(text, /probe_decisions_total\{source="open"\} 1/);
  assert.match(text, /probe_units_total 6/);
  bySource.inc({ source: 'open' }); // after: the real counter
  assert.match(await registry.metrics(), /probe_decisions_total\{source="open"\} 2/);
});

test('a counter read first (its own values) also registers it, once', async () => {
  const registry = lazyRegistry();
  const failures = lazyCounter(registry, { name: 'probe_failures_total', help: 'probe', labelNames: ['reason'] as const });
  failures.inc({ reason: 'deadline' });
  assert.deepEqual((await failures.get()).values.map((v) => [v.labels, v.value]), [[{ reason: 'deadline' }, 1]]);
  assert.equal((await registry.getMetricsAsJSON()).filter((m) => m.name === 'probe_failures_total').length, 1);
});

test('the registry is a prom-client Registry (the workers aggregator checks instanceof)', () => {
  assert.ok(lazyRegistry() instanceof Registry);
});
