// The penalty box on Redis: its key beside the bucket's (same hash tag, so the
// same cluster slot as the decision that feeds it); a limit with a penalty
// decided in ONE EVALSHA (penalized.lua around the policy's twin and
// penalty.lua), and the box's twin on its own for the twin tests and reads.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Decision } from '../../core/decision.js';
import { assertPenaltyKey, type BucketKey, penaltyKeyOf } from '../../core/ids.js';
import { capacityOf, type PolicyName, type Rule } from '../../policies/rule.js';
import { needsBoundaries, ruleAt } from '../../policies/calendar-rule.js';
import { POLICY_REGISTRY, policyOf } from '../../policies/index.js';
import { deserializePenalty, type PenaltyConfig, type PenaltyState, penaltyLuaArgs } from '../../policies/penalty/model.js';
import { systemClock } from '../clock.js';
import type { RedisClient } from './client.js';
import { fieldOf, normalise, preludeFor, redisKeyOf } from './scripts.js';

// Read on first use, not at import: `import 'sluice'` reads no script (test/library/packed.sys.test.ts).
let penaltyLua: string | undefined;
const penaltySource = (): string => {
  penaltyLua ??= readFileSync(new URL('../../policies/penalty/penalty.lua', import.meta.url), 'utf8');
  return penaltyLua;
};
let penaltyScript: Script | undefined;
function boxScript(): Script {
  if (penaltyScript === undefined) {
    const source = normalise(penaltySource());
    penaltyScript = { source, sha: createHash('sha1').update(source).digest('hex') };
  }
  return penaltyScript;
}

export { assertPenaltyKey, bucketKeyOfPenalty, penaltyKeyOf } from '../../core/ids.js';

export interface PenaltyReply {
  blocked: boolean;
  retryAfterMs: number;
  blockedUntilMs: number;
  state: PenaltyState;
}

/** Runs the twin once: `refused` counts a refusal, otherwise it only reads. `nowUs` overrides Redis TIME (vectors only). */
export async function runPenalty(client: RedisClient, bucket: BucketKey, config: PenaltyConfig, refused: boolean, nowUs?: number): Promise<PenaltyReply> {
  const args = [penaltyKeyOf(bucket), refused ? 1 : 0, nowUs === undefined ? '' : nowUs, ...penaltyLuaArgs(config)];
  const { source, sha } = boxScript();
  let reply: [number, number, number, string];
  try {
    reply = (await client.evalsha(sha, 1, ...args)) as typeof reply;
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('NOSCRIPT'))) throw error;
    reply = (await client.eval(source, 1, ...args)) as typeof reply;
  }
  return { blocked: reply[0] === 1, retryAfterMs: reply[1], blockedUntilMs: reply[2], state: deserializePenalty(reply[3]) };
}

interface Script {
  source: string;
  sha: string;
}
const PENALIZED = new Map<PolicyName, Script>();

/** The one-script form for a policy, built and hashed once per process. */
function penalizedScriptOf(policy: PolicyName): Script {
  let script = PENALIZED.get(policy);
  if (script === undefined) {
    const body = readFileSync(POLICY_REGISTRY[policy].lua, 'utf8');
    const driver = readFileSync(new URL('../../policies/penalty/penalized.lua', import.meta.url), 'utf8');
    const source = normalise(
      [
        `local sluice_policy = function(KEYS, ARGV, redis)\n${preludeFor(body)}\n${body}\nend`,
        `local sluice_penalty = function(KEYS, ARGV, redis)\n${penaltySource()}\nend`,
        driver,
      ].join('\n'),
    );
    script = { source, sha: createHash('sha1').update(source).digest('hex') };
    PENALIZED.set(policy, script);
  }
  return script;
}

/**
 * Decides `cost` units of `bucket` under `rule` with its penalty box, in one
 * script call: a blocked key costs this one call and charges nothing.
 * `nowUs` overrides Redis TIME, for the test vectors only.
 */
export async function runPenalized(client: RedisClient, call: { bucket: BucketKey; rule: Rule; cost: number; penalty: PenaltyConfig }, nowUs?: number): Promise<Decision> {
  const { bucket, cost, penalty } = call;
  // A calendar rule carries the boundaries around this instance's now; the script picks its window by Redis TIME.
  const rule = needsBoundaries(call.rule) ? ruleAt(call.rule, nowUs === undefined ? systemClock() : nowUs / 1000) : call.rule;
  const script = penalizedScriptOf(rule.policy);
  const own = [cost, '', ...policyOf(rule).model.luaArgs(rule), fieldOf(rule.policy, bucket)];
  const args = [redisKeyOf(rule.policy, bucket), penaltyKeyOf(bucket), nowUs === undefined ? '' : nowUs, own.length, ...own, ...penaltyLuaArgs(penalty)];
  let reply: number[];
  try {
    reply = (await client.evalsha(script.sha, 2, ...args)) as number[];
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('NOSCRIPT'))) throw error;
    reply = (await client.eval(script.source, 2, ...args)) as number[];
  }
  const decision: Decision = {
    allowed: reply[0] === 1,
    remaining: reply[1]!,
    limit: capacityOf(rule),
    resetAfterMs: reply[2]!,
    retryAfterMs: reply[3]!,
    delayMs: reply[4]!,
    source: 'redis',
  };
  if (reply[6]! > 0) decision.blockedUntilMs = reply[6]!;
  // Only the refusal that starts a block is indexed (a second call, then only): a blocked key still costs one.
  if (reply[5] === 0 && reply[6]! > 0) await indexBlock(client, penaltyKeyOf(bucket), reply[6]!);
  return decision;
}

/**
 * The blocked keys, for the admin's list: one sorted set (penalty key by the
 * block's end, ms) in a slot of its own, bounded to the PENALTY_INDEX_MAX
 * blocks ending last; ended blocks are dropped whenever one is added.
 */
export const PENALTY_INDEX = 'pb-index:{sluice-penalties}';
export const PENALTY_INDEX_MAX = 10_000;

async function indexBlock(client: RedisClient, key: string, untilMs: number): Promise<void> {
  await client
    .multi()
    .zadd(PENALTY_INDEX, untilMs, key)
    .zremrangebyscore(PENALTY_INDEX, '-inf', Date.now())
    .zremrangebyrank(PENALTY_INDEX, 0, -PENALTY_INDEX_MAX - 1)
    // A key without a TTL counts as never expiring for GT: NX gives a new index its first one.
    .pexpireat(PENALTY_INDEX, untilMs, 'NX')
    .pexpireat(PENALTY_INDEX, untilMs, 'GT')
    .exec();
}

/** A blocked key as the admin lists it: its penalty key and when the block ends. */
export interface BlockedKey {
  key: string;
  blockedUntilMs: number;
}

/** The blocks still running at `nowMs`, soonest to end first, at most `limit`. */
export async function listBlocked(client: RedisClient, nowMs: number, limit = 1000): Promise<BlockedKey[]> {
  const flat = await client.zrangebyscore(PENALTY_INDEX, `(${nowMs}`, '+inf', 'WITHSCORES', 'LIMIT', 0, limit);
  const out: BlockedKey[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push({ key: flat[i]!, blockedUntilMs: Number(flat[i + 1]) });
  return out;
}

/** Lifts a block and forgives its level (the key's penalty state is deleted); whether there was one. */
export async function liftRedisBlock(client: RedisClient, key: string): Promise<boolean> {
  assertPenaltyKey(key);
  const [deleted] = await Promise.all([client.del(key), client.zrem(PENALTY_INDEX, key)]);
  return deleted === 1;
}
