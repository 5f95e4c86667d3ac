// Concurrency leases in Redis: each call is one EVALSHA of the model's Lua
// twin (policies/concurrency/concurrency.lua) on the key's sorted set, with
// one EVAL resend on NOSCRIPT (which also loads the script on that node).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SlotOp } from '../../policies/concurrency/model.js';
import type { SlotCall, SlotReply, SlotStore } from '../slot-store.js';
import type { RedisClient } from './client.js';
import { normalise } from './scripts.js';

const SOURCE = normalise(readFileSync(new URL('../../policies/concurrency/concurrency.lua', import.meta.url), 'utf8'));
const SHA = createHash('sha1').update(SOURCE).digest('hex');

/** `nowUs` overrides Redis TIME, for the shared test vectors only. */
export async function runSlot(client: RedisClient, op: SlotOp, call: SlotCall, nowUs?: number): Promise<{ held: boolean; inUse: number; ttlMs: number }> {
  const args = [call.key, op, nowUs === undefined ? '' : nowUs, call.max, call.leaseId, call.ttlMs];
  let reply: number[];
  try {
    reply = (await client.evalsha(SHA, 1, ...args)) as number[];
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('NOSCRIPT'))) throw error;
    reply = (await client.eval(SOURCE, 1, ...args)) as number[];
  }
  return { held: reply[0] === 1, inUse: reply[1]!, ttlMs: reply[2]! };
}

export class RedisSlotStore implements SlotStore {
  readonly kind = 'redis' as const;

  constructor(private readonly client: RedisClient) {}

  acquire(call: SlotCall): Promise<SlotReply> {
    return runSlot(this.client, 'acquire', call);
  }

  release(call: SlotCall): Promise<SlotReply> {
    return runSlot(this.client, 'release', call);
  }
}
