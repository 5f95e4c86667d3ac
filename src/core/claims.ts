// A JWT claim's value as text, for a limit key or a header sent upstream:
// strings (non-empty), numbers and booleans only; an object or a list is no
// key (its JSON spelling would depend on the issuer's key order).

export function claimText(claims: Readonly<Record<string, unknown>> | undefined, claim: string): string | undefined {
  const value = claims?.[claim];
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}
