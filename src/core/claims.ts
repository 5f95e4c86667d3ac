// A JWT claim's value as text, for a limit key or a header sent upstream:
// strings (non-empty), numbers and booleans only; an object or a list is no
// key (its JSON spelling would depend on the issuer's key order). As a header
// sent upstream, only what a header can carry as is.

export function claimText(claims: Readonly<Record<string, unknown>> | undefined, claim: string): string | undefined {
  const value = claims?.[claim];
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** Visible ASCII, spaces and tabs: what a header value may hold as is. */
const HEADER_VALUE = /^[\t\x20-\x7e]{1,8192}$/;

/** A claim as a header value; undefined when no header could carry it as is (a newline, non-ASCII): left out, never sent mangled. */
export function claimHeaderValue(claims: Readonly<Record<string, unknown>> | undefined, claim: string): string | undefined {
  const value = claimText(claims, claim);
  return value !== undefined && HEADER_VALUE.test(value) ? value : undefined;
}
