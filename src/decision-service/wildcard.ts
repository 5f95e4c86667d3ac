// A descriptor value with `*` in it, matched as the reference matches it: each
// `*` stands for any run of characters (none included), wherever it stands —
// trailing (`foo*`), in the middle (`/api/*/action`) or several times.
import type { WildcardParts } from '../config/decision-service.js';

/** The pattern split on `*` once, at load time; one part means no wildcard. */
export type { WildcardParts } from '../config/decision-service.js';

export const wildcardPartsOf = (value: string): WildcardParts => value.split('*');

export const isWildcard = (value: string): boolean => value.includes('*');

/** Whether `value` matches the pattern: its first part as prefix, its last as suffix, the middle ones in order between. */
export function wildcardMatch(parts: WildcardParts, value: string): boolean {
  if (parts.length === 1) return parts[0] === value;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (value.length < first.length + last.length || !value.startsWith(first) || !value.endsWith(last)) return false;
  let at = first.length;
  const end = value.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = value.indexOf(parts[i]!, at);
    if (found < 0 || found + parts[i]!.length > end) return false;
    at = found + parts[i]!.length;
  }
  return true;
}
