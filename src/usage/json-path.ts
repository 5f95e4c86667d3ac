// A dotted path into parsed JSON (`usage.total_tokens`): the value there, or
// undefined when any step is missing or not an object.

export function valueAt(json: unknown, path: readonly string[]): unknown {
  let at = json;
  for (const step of path) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    if (!Object.hasOwn(at, step)) return undefined;
    at = (at as Record<string, unknown>)[step];
  }
  return at;
}
