// A usage value as the response gave it, judged: whole units to charge, or
// why it cannot be charged (the limit then charges its fallback). A header
// gives text, a JSON field any value.

/** Why a response's usage cannot be charged; each is counted in /metrics. */
export type BadUsage =
  /** The header or field is absent (or the body is not JSON). */
  | 'missing'
  /** Present but not a finite number. */
  | 'not_a_number'
  | 'negative'
  /** More than the limit's capacity: no single answer can use more than the whole limit. */
  | 'above_capacity'
  /** A JSON body larger than the parser keeps (usage/usage-reader.ts). */
  | 'too_large'
  /** The response was cut (upstream error, client gone) before its usage came. */
  | 'cut';

export type UsageValue = { readonly units: number } | { readonly bad: BadUsage };

/** The units to charge for `raw` against a limit of `capacity`; a fraction is rounded up. */
export function judgeUsage(raw: unknown, capacity: number): UsageValue {
  if (raw === undefined || raw === null) return { bad: 'missing' };
  let value: number;
  if (typeof raw === 'number') value = raw;
  else if (typeof raw === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(raw)) value = Number(raw);
  else return { bad: 'not_a_number' };
  if (!Number.isFinite(value)) return { bad: 'not_a_number' };
  if (value < 0) return { bad: 'negative' };
  const units = Math.ceil(value);
  if (units > capacity) return { bad: 'above_capacity' };
  return { units };
}
