// The contract every policy model keeps. A model is pure: no I/O, no clock, no
// randomness. Its Lua twin (the `.lua` file beside it) computes the same thing
// inside Redis, atomically, and the shared test vectors hold the two together.
import type { ModelDecision } from '../core/decision.js';

export interface StepResult<S> {
  /** The state after the call (unchanged when nothing needs writing). */
  state: S;
  decision: ModelDecision;
  /** Whether the state changed and must be stored. */
  write: boolean;
  /** How long the stored state matters; after it the key may vanish and the bucket starts fresh. */
  ttlMs: number;
}

export interface AdjustResult<S> {
  state: S;
  ttlMs: number;
}

/**
 * One rate-limit policy as a pure function.
 *
 * Time: `now` is in milliseconds (fractions allowed); models work in whole
 * microseconds (`toMicros`) so that the TypeScript and Lua runtimes, both on
 * IEEE doubles, compute bit-identical results.
 *
 * Cost 0 means peek: the decision says whether one unit would be allowed now,
 * and nothing is written.
 */
export interface PolicyModel<R extends { readonly policy: string }, S> {
  readonly policy: R['policy'];
  step(state: S | undefined, now: number, rule: R, cost: number): StepResult<S>;
  /** The state as the Lua twin stores and returns it, for comparing the two runtimes. */
  serialize(state: S): string;
  /** Inverse of `serialize`. */
  deserialize(text: string): S;
  /**
   * Time-based policies only: the state of a bucket that is full again (a
   * queue empty again) `resetAfterMs` after `now`, e.g. to rebuild locally what
   * Redis last reported.
   */
  fromReset?(now: number, resetAfterMs: number, rule: R): S;
  /** With `fromReset`: how much later (ms) one unit taken makes that time, e.g. 1000 / rate. */
  unitMs?(rule: R): number;
  /**
   * Takes `delta` units from the bucket whatever the limit (negative gives them
   * back, never past a full bucket or an empty window). A charge past empty is a
   * debt the refill (or the window's end) pays off before anything is admitted again. Used
   * to reconcile a late Redis reply with what the local fallback decided, and
   * to charge the fallback's outage admissions. Its Lua twin is `adjustLua`.
   */
  adjust?(state: S | undefined, now: number, rule: R, delta: number): AdjustResult<S>;
  /** Rule parameters in the order the Lua twin reads them from ARGV[3..]. */
  luaArgs(rule: R): (string | number)[];
  /**
   * How long (ms) an empty bucket takes to be whole again; a window policy's
   * window (a calendar window's length is the caller's, as it changes): the
   * `w=` of the RateLimit-Policy header and the notifier's slots.
   */
  fillMs(rule: R): number;
  /**
   * The rule with its capacity or limit and its rate multiplied by `factor`
   * (0 < factor ≤ 1), never below one unit (scaledUnits): a region's share, a
   * shard's part, one instance's part of the fallback.
   */
  scale(rule: R, factor: number): R;
}

/** `value` units times `factor`, floored, never below one: a scaled rule can always admit something. */
export const scaledUnits = (value: number, factor: number): number => Math.max(1, Math.floor(value * factor + 1e-9));

export const toMicros = (nowMs: number): number => Math.round(nowMs * 1000);
/** Whole milliseconds, rounded up, from microseconds: never promise a retry too early. */
export const ceilMs = (micros: number): number => (micros <= 0 ? 0 : Math.ceil(micros / 1000));
/** Absorbs float noise such as 2.9999999999 before flooring a unit count. */
export const floorUnits = (units: number): number => Math.max(0, Math.floor(units + 1e-9));
