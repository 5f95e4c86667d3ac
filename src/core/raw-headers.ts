// Reads node's rawHeaders list (name, value, name, value…), which still has
// every header as sent: node keeps only the first Host or Authorization in
// `headers`, so a second one is seen here only.

/** How many times a header came (node keeps only the first Host, Authorization…, and joins others). */
export function countHeader(raw: readonly string[], lowerName: string): number {
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === lowerName.length && raw[i]!.toLowerCase() === lowerName) count++;
  return count;
}
