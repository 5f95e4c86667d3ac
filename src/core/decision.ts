// A decision is a value, never a thrown error: callers never have to sort
// "limited" from "broken". `source` says which part of Sluice made it.

export type DecisionSource =
  | 'redis' // the shared store's atomic script
  | 'memory' // the in-process store (embedded default, one instance)
  | 'fallback' // the local limiter holding 1/N of the limit while the store is down
  | 'cache' // a locally cached "over limit until T" or a leased token
  | 'shadow' // a shadow rule: counted, never enforced
  | 'open' // store down and the rule says allow
  | 'closed'; // store down and the rule says refuse (503)

export interface Decision {
  allowed: boolean;
  /** Whole units still available after this call. */
  remaining: number;
  /** The rule's capacity (burst) or window limit. */
  limit: number;
  /** Milliseconds until the bucket is full again or the window resets. */
  resetAfterMs: number;
  /** Milliseconds until `cost` units are available; 0 when allowed. */
  retryAfterMs: number;
  /** Traffic shaping only: how long to hold an accepted request before serving it. */
  delayMs: number;
  source: DecisionSource;
  /** Set by shadow mode on a decision it turned into an admission: the rule would have refused (counted as over by the decision service). */
  shadowRefused?: true;
  /** Set when the key is in a penalty box (src/policies/penalty/): ms since the epoch the block ends; the limit was not consulted when it already was. */
  blockedUntilMs?: number;
}

/** What a pure policy model decides; the store adds the source. */
export type ModelDecision = Omit<Decision, 'source'>;
