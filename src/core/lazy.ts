// An object made on first use: what the library loads only on some paths
// (a zod schema, a prom-client metric) is declared at module level as usual,
// and built, with the package behind it, when something first reads it.

/** Stands for the object `make` returns, made (once) on the first read that `early` does not answer. */
export function lazily<T extends object>(make: () => T, early: (key: string | symbol) => unknown = () => undefined): T {
  let made: T | undefined;
  const real = () => (made ??= make());
  return new Proxy({} as T, {
    get(_target, key) {
      const answer = early(key);
      if (answer !== undefined) return answer;
      const value: unknown = Reflect.get(real(), key, real());
      return typeof value === 'function' ? value.bind(real()) : value;
    },
    has: (_target, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_target, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(real(), key);
      return descriptor ? { ...descriptor, configurable: true } : undefined;
    },
    // instanceof (prom-client's AggregatorRegistry checks `instanceof Registry`).
    getPrototypeOf: () => Object.getPrototypeOf(real()),
  });
}
