// The penalty box on Redis: its key beside the bucket's (same hash tag, so the
// same cluster slot as the decision that feeds it) and a call of its Lua twin
// (src/policies/penalty/penalty.lua) on its own, for the twin tests and for
// the admin API's reads.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { BucketKey } from '../../core/ids.js';
import { deserializePenalty, type PenaltyConfig, type PenaltyState, penaltyLuaArgs } from '../../policies/penalty/model.js';
import type { RedisClient } from './client.js';
import { normalise } from './scripts.js';

const SOURCE = normalise(readFileSync(new URL('../../policies/penalty/penalty.lua', import.meta.url), 'utf8'));
const SHA = createHash('sha1').update(SOURCE).digest('hex');

/** `pb:{tenant}…`: the bucket's key with another prefix, so it keeps the bucket's hash tag (and slot). */
export function penaltyKeyOf(bucket: BucketKey): string {
  return `pb:${bucket.key.slice('rl:'.length)}`;
}

export interface PenaltyReply {
  blocked: boolean;
  retryAfterMs: number;
  blockedUntilMs: number;
  state: PenaltyState;
}

/** Runs the twin once: `refused` counts a refusal, otherwise it only reads. `nowUs` overrides Redis TIME (vectors only). */
export async function runPenalty(client: RedisClient, bucket: BucketKey, config: PenaltyConfig, refused: boolean, nowUs?: number): Promise<PenaltyReply> {
  const args = [penaltyKeyOf(bucket), refused ? 1 : 0, nowUs === undefined ? '' : nowUs, ...penaltyLuaArgs(config)];
  let reply: [number, number, number, string];
  try {
    reply = (await client.evalsha(SHA, 1, ...args)) as typeof reply;
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('NOSCRIPT'))) throw error;
    reply = (await client.eval(SOURCE, 1, ...args)) as typeof reply;
  }
  return { blocked: reply[0] === 1, retryAfterMs: reply[1], blockedUntilMs: reply[2], state: deserializePenalty(reply[3]) };
}
