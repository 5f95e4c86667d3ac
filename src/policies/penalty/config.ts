// A limit's `penalty: {...}` validated into a PenaltyConfig, each bad value
// refused with its field named: a box that blocks after no refusal, a block
// shorter than the limit's own window (the limit alone would refuse as long),
// a backoff that shortens each repeat, or a cap below the first block.
import { SluiceError } from '../../core/errors.js';
import type { Rule } from '../index.js';
import type { PenaltyConfig } from './model.js';

const MAX_MS = 366 * 86_400_000;
const KNOWN = new Set(['after', 'withinMs', 'blockMs', 'backoff', 'maxMs', 'forgiveAfterMs']);

function fail(message: string, field: string): never {
  throw new SluiceError('ERR_RULE_INVALID', message, field);
}

function msOf(input: Record<string, unknown>, name: string, field: string, min = 1): number {
  const value = input[name];
  if (!Number.isInteger(value)) fail('must be an integer number of milliseconds', `${field}.${name}`);
  const ms = value as number;
  if (ms < min) fail(`must be at least ${min}`, `${field}.${name}`);
  if (ms > MAX_MS) fail(`must be at most ${MAX_MS} (366 days)`, `${field}.${name}`);
  return ms;
}

/**
 * `input` at `field` (e.g. `limits[0].penalty`) as a PenaltyConfig. `windowMs`
 * is the limit's own window (or its refill time for a bucket), which a block
 * must be at least as long as. `maxMs` defaults to blockMs × 64 capped at 24 h
 * (never below blockMs), `forgiveAfterMs` to maxMs: a key quiet for as long as
 * the longest block starts again at the first block.
 */
export function parsePenalty(input: unknown, field: string, windowMs = 0): PenaltyConfig {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) fail('must be an object {after, withinMs, blockMs, backoff?, maxMs?, forgiveAfterMs?}', field);
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) if (!KNOWN.has(key)) fail(`unknown field; expected one of ${[...KNOWN].join(', ')}`, `${field}.${key}`);
  const after = raw.after;
  if (!Number.isInteger(after) || (after as number) < 1) fail('must be an integer of at least 1 (refusals before the block)', `${field}.after`);
  if ((after as number) > 1_000_000) fail('must be at most 1000000', `${field}.after`);
  const withinMs = msOf(raw, 'withinMs', field);
  const blockMs = msOf(raw, 'blockMs', field);
  if (blockMs < windowMs) fail(`must be at least the limit's window (${windowMs} ms): a shorter block would end before the limit itself lets the key in`, `${field}.blockMs`);
  const backoff = raw.backoff ?? 1;
  if (typeof backoff !== 'number' || !Number.isFinite(backoff) || backoff < 1 || backoff > 1000) fail('must be a number from 1 to 1000 (1 = every block as long)', `${field}.backoff`);
  const maxMs = raw.maxMs === undefined ? Math.max(blockMs, Math.min(blockMs * 64, 86_400_000)) : msOf(raw, 'maxMs', field);
  if (maxMs < blockMs) fail(`must be at least blockMs (${blockMs})`, `${field}.maxMs`);
  const forgiveAfterMs = raw.forgiveAfterMs === undefined ? maxMs : msOf(raw, 'forgiveAfterMs', field);
  return { after: after as number, withinMs, blockMs, backoff, maxMs, forgiveAfterMs };
}

/**
 * The limit's own window, ms, that a block must outlast: a fixed or sliding
 * window's length, the time an empty bucket takes to fill (token bucket,
 * GCRA) or a full queue to drain (leaky bucket). A calendar window's length
 * changes with the calendar: 0, nothing to check.
 */
export function ruleWindowMs(rule: Rule): number {
  switch (rule.policy) {
    case 'token_bucket':
    case 'gcra':
      return Math.ceil((rule.capacity / rule.refillPerSecond) * 1000);
    case 'leaky_bucket':
      return Math.ceil(((rule.burst + 1) / rule.ratePerSecond) * 1000);
    default:
      return rule.windowMs ?? 0;
  }
}

/**
 * Why `rule` cannot carry a penalty box, or undefined: each refusal must reach
 * the shared store to be counted, and a leased or sharded limit decides some
 * of its requests elsewhere (leased units locally, each shard on its own key).
 */
export function penaltyConflict(rule: Rule): { field: 'lease' | 'shards'; message: string } | undefined {
  if (rule.lease !== undefined) return { field: 'lease', message: 'cannot be combined with a penalty: leased units are spent locally, so the refusals would not all be counted' };
  if (rule.shards !== undefined) return { field: 'shards', message: 'cannot be combined with a penalty: each shard would count its own refusals' };
  return undefined;
}
