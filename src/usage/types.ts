// What a limit priced by usage carries once its config is checked
// (check-usage.ts), and what one request of it reserved.

/** Where a response says its usage. */
export type UsageSource = { readonly kind: 'header'; readonly header: string } | { readonly kind: 'json'; readonly path: readonly string[] };

export interface UsageCost {
  /** A fixed estimate, or one read from the request's JSON body. */
  readonly estimate: { readonly fixed: number } | { readonly fromBody: readonly string[]; readonly default: number };
  readonly from: UsageSource;
  /** Charged when the usage is missing or bad. */
  readonly fallback: number;
}

/** Which answers a limit counts: a status or a class (`5` for 5xx). */
export interface CountRule {
  /** true: only the listed answers count; false: the listed ones are refunded. */
  readonly only: boolean;
  readonly statuses: ReadonlySet<number>;
  readonly classes: ReadonlySet<number>;
}

/** Whether a limit with `count` counts an answer of `status`. */
export function counts(rule: CountRule, status: number): boolean {
  const listed = rule.statuses.has(status) || rule.classes.has(Math.floor(status / 100));
  return rule.only ? listed : !listed;
}
