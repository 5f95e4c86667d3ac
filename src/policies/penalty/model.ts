// The penalty box as a pure model: a key refused `after` times within
// `withinMs` is blocked for `blockMs`, times `backoff` on each repeat offence
// up to `maxMs`; the offence level is forgiven once the key has been quiet
// (not blocked) for `forgiveAfterMs` after its last block ended. The rate
// limit's own rule (a refused request charges nothing) is untouched: the box
// counts the rate limit's refusals in a state of its own. Its Lua twin,
// penalty.lua, runs in the same script as the decision, so every instance
// sees one block; vectors.json holds the two together.
import { ceilMs, toMicros } from '../model.js';

/** A limit's penalty, validated (see config.ts); all times in ms. */
export interface PenaltyConfig {
  readonly after: number;
  readonly withinMs: number;
  readonly blockMs: number;
  readonly backoff: number;
  readonly maxMs: number;
  readonly forgiveAfterMs: number;
}

/** All times in µs since the epoch; 0 = none. */
export interface PenaltyState {
  /** Refusals counted in the current run, which opened at `runStart`. */
  strikes: number;
  runStart: number;
  /** Blocks served so far (the next one lasts blockMs × backoff^level). */
  level: number;
  blockedUntil: number;
}

export interface PenaltyStep {
  state: PenaltyState;
  /** Whether the key was already blocked: the rate limit was not consulted, nothing was counted. */
  blocked: boolean;
  /** Until when (ms since the epoch) the key is blocked, 0 when it is not (this call may have started the block). */
  blockedUntilMs: number;
  /** Whole ms until the block ends, rounded up; 0 when not blocked. */
  retryAfterMs: number;
  write: boolean;
  ttlMs: number;
}

export const EMPTY_PENALTY: PenaltyState = { strikes: 0, runStart: 0, level: 0, blockedUntil: 0 };

/** The state at `now` with what has lapsed dropped: a run past `within`, a level past its forgiveness. */
function lapsed(state: PenaltyState | undefined, now: number, config: PenaltyConfig): PenaltyState {
  const s = { ...(state ?? EMPTY_PENALTY) };
  if (s.blockedUntil > 0 && now >= s.blockedUntil + config.forgiveAfterMs * 1000) {
    s.level = 0;
    s.blockedUntil = 0;
  }
  if (s.strikes > 0 && now >= s.runStart + config.withinMs * 1000) {
    s.strikes = 0;
    s.runStart = 0;
  }
  return s;
}

/** How long (µs) the block after `level` earlier ones lasts: multiplied step by step, so Lua's doubles agree bit for bit. */
export function blockMicros(level: number, config: PenaltyConfig): number {
  const max = config.maxMs * 1000;
  let block = Math.min(config.blockMs * 1000, max);
  for (let i = 0; i < level && block < max; i++) block = Math.min(block * config.backoff, max);
  return Math.floor(block);
}

/** How long the state matters: after it, it decides exactly like no state. */
function ttlOf(s: PenaltyState, now: number, config: PenaltyConfig): number {
  const until = Math.max(s.blockedUntil > 0 ? s.blockedUntil + config.forgiveAfterMs * 1000 : 0, s.strikes > 0 ? s.runStart + config.withinMs * 1000 : 0);
  return Math.max(1, ceilMs(until - now));
}

/**
 * One request of a key at `nowMs`. `refused` is the rate limit's outcome and
 * is only read when the key was not already blocked (a blocked request is
 * refused before the limit is consulted, and does not lengthen the block).
 */
export function stepPenalty(state: PenaltyState | undefined, nowMs: number, config: PenaltyConfig, refused: boolean): PenaltyStep {
  const now = toMicros(nowMs);
  const s = lapsed(state, now, config);
  if (now < s.blockedUntil) {
    return { state: s, blocked: true, blockedUntilMs: Math.ceil(s.blockedUntil / 1000), retryAfterMs: ceilMs(s.blockedUntil - now), write: false, ttlMs: 0 };
  }
  if (!refused) return { state: s, blocked: false, blockedUntilMs: 0, retryAfterMs: 0, write: false, ttlMs: 0 };
  if (s.strikes === 0) s.runStart = now;
  s.strikes += 1;
  let retryAfterMs = 0;
  let blockedUntilMs = 0;
  if (s.strikes >= config.after) {
    s.blockedUntil = now + blockMicros(s.level, config);
    s.level += 1;
    s.strikes = 0;
    s.runStart = 0;
    retryAfterMs = ceilMs(s.blockedUntil - now);
    blockedUntilMs = Math.ceil(s.blockedUntil / 1000);
  }
  return { state: s, blocked: false, blockedUntilMs, retryAfterMs, write: true, ttlMs: ttlOf(s, now, config) };
}

/** The state as the Lua twin stores it: `strikes:runStart:level:blockedUntil`. */
export const serializePenalty = (s: PenaltyState): string => `${s.strikes}:${s.runStart}:${s.level}:${s.blockedUntil}`;

export function deserializePenalty(text: string): PenaltyState {
  const [strikes, runStart, level, blockedUntil] = text.split(':').map(Number);
  return { strikes: strikes!, runStart: runStart!, level: level!, blockedUntil: blockedUntil! };
}

/** The config's parameters in the order penalty.lua reads them. */
export const penaltyLuaArgs = (c: PenaltyConfig): number[] => [c.after, c.withinMs, c.blockMs, c.backoff, c.maxMs, c.forgiveAfterMs];
