// The policy registry: each policy's pure model and the Lua twin beside it.
import type { PolicyName, Rule } from '../core/rule.js';
import type { PolicyModel } from './model.js';
import { fixedWindow } from './fixed-window/model.js';
import { gcra } from './gcra/model.js';
import { leakyBucket } from './leaky-bucket/model.js';
import { slidingWindowCounter } from './sliding-window-counter/model.js';
import { slidingWindowLog } from './sliding-window-log/model.js';
import { tokenBucket } from './token-bucket/model.js';

export interface PolicyEntry {
  // biome-ignore lint/suspicious/noExplicitAny: the registry is indexed by the rule's own policy
  model: PolicyModel<any, any>;
  /** The Lua twin's file, read once by the script registry. */
  lua: URL;
  /** The Lua twin of the model's `adjust`. */
  adjustLua?: URL;
  /**
   * How Redis's last word on a bucket (units left, time to reset) is carried
   * into the fallback's local decision while Redis is late or away
   * (limiter/fallback/fallback.ts). `time`: the state is a time (full again, or
   * the queue empty, at), rebuilt by the model's `fromReset`, each unit
   * `unitMs` of it. `window`: a count within a window, which a word cannot
   * rebuild; the local bucket is held to its share of what was left until
   * that window has passed (limiter/fallback/last-states.ts).
   */
  carry: 'time' | 'window';
  /**
   * The state lives in a key of its own (the sliding log's sorted set) rather
   * than as a field of the tenant's hash (stores/redis/scripts.ts redisKeyOf).
   */
  ownKey?: true;
}

const TAT_ADJUST = new URL('./tat-adjust.lua', import.meta.url);

export const POLICY_REGISTRY: Record<PolicyName, PolicyEntry> = {
  token_bucket: {
    model: tokenBucket,
    lua: new URL('./token-bucket/token-bucket.lua', import.meta.url),
    adjustLua: new URL('./token-bucket/adjust.lua', import.meta.url),
    carry: 'time',
  },
  gcra: { model: gcra, lua: new URL('./gcra/gcra.lua', import.meta.url), adjustLua: TAT_ADJUST, carry: 'time' },
  fixed_window: {
    model: fixedWindow,
    lua: new URL('./fixed-window/fixed-window.lua', import.meta.url),
    adjustLua: new URL('./fixed-window/adjust.lua', import.meta.url),
    carry: 'window',
  },
  sliding_window_log: {
    model: slidingWindowLog,
    lua: new URL('./sliding-window-log/sliding-window-log.lua', import.meta.url),
    adjustLua: new URL('./sliding-window-log/adjust.lua', import.meta.url),
    carry: 'window',
    ownKey: true,
  },
  sliding_window_counter: {
    model: slidingWindowCounter,
    lua: new URL('./sliding-window-counter/sliding-window-counter.lua', import.meta.url),
    adjustLua: new URL('./sliding-window-counter/adjust.lua', import.meta.url),
    carry: 'window',
  },
  leaky_bucket: { model: leakyBucket, lua: new URL('./leaky-bucket/leaky-bucket.lua', import.meta.url), adjustLua: TAT_ADJUST, carry: 'time' },
};

export function policyOf(rule: Rule): PolicyEntry {
  const entry = POLICY_REGISTRY[rule.policy];
  if (!entry) throw new Error(`no model registered for policy ${rule.policy}`);
  return entry;
}
