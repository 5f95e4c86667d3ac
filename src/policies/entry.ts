// What the registry (index.ts) holds of each policy: everything the rest of
// Sluice asks of a policy, so no file outside src/policies/ reads a policy's
// name to decide what to do. A policy's folder exports one entry; the
// registry lists the entries, and the rule union, the policy names and the
// rule parser follow from that list.
import type { z as Zod } from 'zod';
import type { PolicyModel } from './model.js';

/** A field of the dashboard's rule form: the rule's parameter and its label. */
export interface FormField {
  readonly name: string;
  readonly label: string;
}

/** A real window a decision belongs to (a fixed window's), as the notifier deduplicates by it. */
export interface DecisionWindow {
  /** The window's start, epoch ms: its id. */
  readonly start: number;
  /** When the limit is whole again: the window's end. */
  readonly resetAt: number;
  /** How long a note of the window must live. */
  readonly ttlMs: number;
}

export interface PolicyEntry<R extends { readonly policy: string }> {
  /** The policy's name, the rules' `policy`. */
  readonly policy: R['policy'];
  /** The rule's schema (lazy: zod loads on its first read). */
  readonly schema: Zod.ZodType<R>;
  // biome-ignore lint/suspicious/noExplicitAny: each model's state is its own
  readonly model: PolicyModel<R, any>;
  /** The Lua twin's file, read once by the script registry. */
  readonly lua: URL;
  /** The Lua twin of the model's `adjust`. */
  readonly adjustLua?: URL;
  /**
   * How Redis's last word on a bucket (units left, time to reset) is carried
   * into the fallback's local decision while Redis is late or away
   * (limiter/fallback/fallback.ts). `time`: the state is a time (full again, or
   * the queue empty, at), rebuilt by the model's `fromReset`, each unit
   * `unitMs` of it. `window`: a count within a window, which a word cannot
   * rebuild; the local bucket is held to its share of what was left until
   * that window has passed (limiter/fallback/last-states.ts).
   */
  readonly carry: 'time' | 'window';
  /**
   * A `window` policy whose window slides: what expired from it since Redis's
   * word is unknown, so the word's count binds for a short part of the window
   * only (limiter/fallback/last-states.ts lostUnits).
   */
  readonly slidingWindow?: true;
  /**
   * The state lives in a key of its own (the sliding log's sorted set) rather
   * than as a field of the tenant's hash (stores/redis/scripts.ts redisKeyOf).
   */
  readonly ownKey?: true;
  /** Its rules may set `calendar` (windows on a time zone's calendar); the others' are refused naming the field. */
  readonly calendarWindows?: true;
  /**
   * A batch of units may be taken in one store call and spent locally (hot
   * keys). A policy that shapes (delays requests rather than admitting them in
   * advance) cannot lease.
   */
  readonly leasable: boolean;
  /** The most units one call can ever be granted: a larger cost could never be allowed. */
  capacity(rule: R): number;
  /**
   * The length (ms) of the window `now` falls in, when it changes with time (a
   * calendar window: months, DST days): the `w=` of the RateLimit-Policy
   * header. Undefined (or absent): the model's `fillMs`, which does not change.
   */
  currentWindowMs?(rule: R, now: number): number | undefined;
  /**
   * The real window a decision made at `now`, whose bucket resets at `end`,
   * belongs to (the notifier's dedup unit). Absent: the policy is rolling and
   * has none; the notifier cuts time into slots as long as `fillMs`.
   */
  decisionWindow?(rule: R, end: number, now: number): DecisionWindow;
  /** The rule's parameters as the dashboard's rule form asks for them, in order. */
  readonly formFields: readonly FormField[];
}
