// Packages only some paths need (ioredis for a Redis store, zod for the first
// rule, prom-client when a counter is read, opossum for a breaker) are loaded
// on first use, synchronously, so `import 'sluice'` does not pay for them
// (docs/library.md#weight) and no function of the API turns async.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const requireEsm = (process.features as { require_module?: boolean }).require_module === true;

/**
 * The package `name`, loaded now if no one has yet. On a Node that can
 * require ES modules (20.19+), the file `import` resolves to: the same module
 * instance as every `import … from name` of the process (zod is ESM and CJS).
 * Elsewhere, its CommonJS entry (ioredis, prom-client and opossum have no other).
 */
export function loadPackage<T>(name: string): T {
  if (requireEsm) return require(fileURLToPath(import.meta.resolve(name))) as T;
  return require(name) as T;
}
