// What Redis last said about each key (a bounded LRU), and what this instance
// admitted locally since. Three uses:
//  - seeding a fallback bucket whose state is a time from it (token bucket,
//    GCRA, leaky bucket: the registry's `carry`; fallback.ts);
//  - capping a window policy's fallback at this instance's share of what was
//    left (a quota half spent does not come back whole while Redis is down);
//  - after the breaker opened (a failover, a restart, a partition), holding
//    the first reply of each key to what this instance last saw: a master that
//    died with acknowledged writes not yet replicated hands its replica a
//    bucket fuller than it was, and those units (`lostUnits`) are charged back.
import { BoundedLru } from '../../core/lru.js';
import { policyOf } from '../../policies/index.js';
import { capacityOf, type Rule } from '../../policies/rule.js';
import { unitMsOf } from '../engine/plan.js';

/** The part of a Redis reply kept: a decision's or a lease's. */
export interface RedisWord {
  remaining: number;
  resetAfterMs: number;
}

export interface LastState extends RedisWord {
  /** The rule Redis decided with (the global one, not the fallback's 1/N). */
  rule: Rule;
  /** The bucket it is about: one of the key's shards, with `shards`. */
  bucket: string;
  /** Local time of the reply. */
  at: number;
  /** The breaker episode it was said in (see beginEpisode). */
  episode: number;
  /** Units admitted locally since (the fallback): Redis was told of them, or will be, by a charge. */
  localUnits: number;
}

/** A window policy's local cap: the units this instance may still admit, until the window Redis reported has passed. */
export interface WindowShare {
  left: number;
  untilMs: number;
}

/** A sliding window is held to its last count for at most this part of the window (what expired meanwhile is unknown). */
const SLIDING_TRUST = 0.1;

/** Redis's word on a bucket as this instance heard it: about which shard, under which rule, what it took, and when. */
export interface SeenWord {
  readonly bucket: string;
  readonly rule: Rule;
  readonly word: RedisWord;
  /** The units the reply took. */
  readonly taken: number;
  readonly now: number;
}

export class LastStates {
  private readonly states: BoundedLru<string, LastState>;
  private episode = 0;

  constructor(size: number) {
    this.states = new BoundedLru(size);
  }

  peek(key: string): LastState | undefined {
    return this.states.peek(key);
  }

  /** Keys kept (at most the size given). */
  get size(): number {
    return this.states.size;
  }

  /**
   * Records Redis's word on `key` (`seen`); `taken`: the units this reply took. Returns
   * the units the bucket is missing against what this instance last saw, when
   * that was before the breaker last opened, about the same bucket; 0
   * otherwise (the common case). `localInRedis`: false when what this
   * instance admitted locally since is not charged to the bucket yet (still
   * owed, or its charge in flight): those units stay counted against the new
   * word, which does not hold them.
   */
  remember(key: string, seen: SeenWord, localInRedis = true): number {
    const { bucket, rule, word, taken, now } = seen;
    const last = this.states.get(key);
    const checked = last !== undefined && this.suspect(last, bucket) ? { ...last, localUnits: localInRedis ? last.localUnits : 0 } : undefined;
    const lost = checked === undefined ? 0 : lostUnits(checked, rule, word, taken, now);
    // Both are about to be taken from the bucket (the lost units charged back, the local ones charged): the word is held to that.
    const carried = !localInRedis && last?.bucket === bucket ? last.localUnits : 0;
    const held = lessUnits(word, rule, lost);
    if (last === undefined) {
      this.states.set(key, { rule, bucket, at: now, remaining: held.remaining, resetAfterMs: held.resetAfterMs, episode: this.episode, localUnits: carried });
      return lost;
    }
    // A key already kept (the usual case: every decision on it) is updated in place, as noteLocal does: no new state per decision.
    last.rule = rule;
    last.bucket = bucket;
    last.at = now;
    last.remaining = held.remaining;
    last.resetAfterMs = held.resetAfterMs;
    last.episode = this.episode;
    last.localUnits = carried;
    return lost;
  }

  /** Counts at least `units` as admitted locally since the last word (what a charge about to be sent will take). */
  holdLocal(key: string, units: number): void {
    const last = this.states.peek(key);
    if (last !== undefined) last.localUnits = Math.max(last.localUnits, units);
  }

  /** Whether the last word on `key` (about `bucket`) predates the breaker's last opening: its next reply is checked. */
  suspect(last: LastState | undefined, bucket: string): boolean {
    return last !== undefined && last.episode < this.episode && last.bucket === bucket;
  }

  /** `units` admitted locally on `key`. */
  noteLocal(key: string, units: number): void {
    const last = this.states.peek(key);
    if (last !== undefined) last.localUnits += units;
  }

  /** The breaker opened: Redis may come back as another server, or the same one emptied. */
  beginEpisode(): void {
    this.episode++;
  }

  /** The local cap of a window policy under `localRule` (1/N of the limit); undefined when Redis's last word does not bind it. */
  windowShare(key: string, localRule: Rule, now: number): WindowShare | undefined {
    const last = this.states.peek(key);
    if (last === undefined || last.rule.policy !== localRule.policy || !('limit' in localRule) || !('limit' in last.rule)) return undefined;
    const untilMs = last.at + last.resetAfterMs;
    if (now >= untilMs) return undefined;
    const share = Math.floor((last.remaining * localRule.limit) / last.rule.limit + 1e-9);
    return { left: share - last.localUnits, untilMs };
  }

  delete(key: string): void {
    this.states.delete(key);
  }

  clear(): void {
    this.states.clear();
  }
}

/**
 * Units Redis's reply shows that the bucket cannot have: it cannot be fuller
 * than it was at this instance's last word, less what was admitted locally
 * since and what this reply took, plus the refill meanwhile. Other instances'
 * admissions only make it emptier, so this errs toward charging too little.
 */
export function lostUnits(last: LastState, rule: Rule, word: RedisWord, taken: number, now: number): number {
  if (last.rule.policy !== rule.policy) return 0;
  const perUnitMs = unitMsOf(rule);
  if (perUnitMs !== undefined && unitMsOf(last.rule) !== undefined) {
    // Full again at: each unit taken moves that time later by perUnitMs, whatever else happened.
    const expectedFullAt = last.at + last.resetAfterMs + (last.localUnits + taken) * perUnitMs;
    const reportedFullAt = now + word.resetAfterMs;
    return clampUnits((expectedFullAt - reportedFullAt) / perUnitMs, capacityOf(rule));
  }
  if (!('limit' in rule) || !('limit' in last.rule) || last.rule.limit !== rule.limit) return 0;
  const elapsed = now - last.at;
  if (elapsed >= last.resetAfterMs) return 0; // the window Redis spoke of has passed: it may rightly be fuller
  const policy = policyOf(rule);
  // A sliding window's fillMs is its window.
  if (policy.slidingWindow && elapsed > policy.model.fillMs(rule) * SLIDING_TRUST) return 0;
  return clampUnits(word.remaining - (last.remaining - last.localUnits - taken), rule.limit);
}

/** `word` with `units` more taken from its bucket: fewer left and, for a time-based policy, full again that much later. */
function lessUnits(word: RedisWord, rule: Rule, units: number): RedisWord {
  if (units === 0) return word;
  const laterMs = units * (unitMsOf(rule) ?? 0);
  return { remaining: Math.max(0, word.remaining - units), resetAfterMs: word.resetAfterMs + laterMs };
}

const clampUnits = (units: number, most: number) => Math.min(most, Math.max(0, Math.floor(units + 1e-9)));
