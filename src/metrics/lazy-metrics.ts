// A prom-client registry and counters that load prom-client only when first
// read: an increment before that adds to a number in a map, replayed into the
// real counter when it is made. Callers use them as the real objects (the
// gateway registers its own metrics on the registry; a scrape reads it).
import type * as Prom from 'prom-client';
import type { Counter, CounterConfiguration, GaugeConfiguration, LabelValues, Registry } from 'prom-client';
import { lazily } from '../core/lazy.js';
import { loadPackage } from '../core/load-package.js';

const prom = () => loadPackage<typeof Prom>('prom-client');

interface RegistryState {
  real: Registry | undefined;
  /** Makes each counter of the registry (and registers it), once. */
  counters: (() => unknown)[];
}

const states = new WeakMap<Registry, RegistryState>();

function realRegistry(state: RegistryState): Registry {
  if (state.real) return state.real;
  state.real = new (prom().Registry)();
  for (const make of state.counters) make();
  return state.real;
}

export function lazyRegistry(): Registry {
  const state: RegistryState = { real: undefined, counters: [] };
  const registry = lazily(() => realRegistry(state));
  states.set(registry, state);
  return registry;
}

/** A counter on a lazyRegistry(). */
export function lazyCounter<L extends string>(registry: Registry, config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
  const state = states.get(registry);
  if (!state) throw new Error('lazyCounter takes a registry from lazyRegistry()');
  const counted = new Map<string, { labels: LabelValues<L>; value: number }>();
  let real: Counter<L> | undefined;
  const make = (): Counter<L> => {
    if (real) return real;
    real = new (prom().Counter)({ ...config, registers: [] });
    for (const { labels, value } of counted.values()) real.inc(labels, value);
    counted.clear();
    realRegistry(state).registerMetric(real);
    return real;
  };
  state.counters.push(make);
  // A counter made after the registry was first read (a module imported late) joins it at once, as lazyGauge's does.
  if (state.real) make();
  const countEarly = (labels?: LabelValues<L> | number, value?: number): void => {
    const [named, units] = typeof labels === 'object' ? [labels, value ?? 1] : [{} as LabelValues<L>, labels ?? 1];
    const key = JSON.stringify(named);
    const entry = counted.get(key);
    if (entry) entry.value += units;
    else counted.set(key, { labels: named, value: units });
  };
  return lazily(make, (key) => (key === 'inc' && !real ? countEarly : undefined));
}

/** A gauge on a lazyRegistry() whose value `collect` reads at each scrape: before one there is nothing to keep. */
export function lazyGauge(registry: Registry, config: Omit<GaugeConfiguration<string>, 'registers'>): void {
  const state = states.get(registry);
  if (!state) throw new Error('lazyGauge takes a registry from lazyRegistry()');
  const make = () => realRegistry(state).registerMetric(new (prom().Gauge)({ ...config, registers: [] }));
  if (state.real) make();
  else state.counters.push(make);
}
