// Lease scripts (hot keys, design 7.2): one call takes up to `batch` units of a
// token bucket or GCRA key atomically and says how many it got. They read and
// write the same state as the policy's own script, so leased and plain calls
// (and peek, inspect) share one bucket. Defined like the policy scripts: EVALSHA,
// and EVAL again on NOSCRIPT.
import { readFileSync } from 'node:fs';
import type { Rule } from '../../core/rule.js';
import type { RedisClient } from './scripts.js';

export type LeasePolicy = 'token_bucket' | 'gcra';

const PRELUDE = new URL('../../policies/prelude.lua', import.meta.url);
const LEASE_LUA: Record<LeasePolicy, URL> = {
  token_bucket: new URL('../../policies/token-bucket/lease.lua', import.meta.url),
  gcra: new URL('../../policies/gcra/lease.lua', import.meta.url),
};

const normalise = (lua: string) => lua.replace(/^\s+/gm, '').replace(/^--.*\n/gm, '');
const commandName = (policy: LeasePolicy) => `sluice_lease_${policy}`;
const defined = new WeakSet<object>();

export function isLeasable(rule: Rule): rule is Extract<Rule, { policy: LeasePolicy }> {
  return rule.policy === 'token_bucket' || rule.policy === 'gcra';
}

export function defineLeaseScripts(client: RedisClient): void {
  if (defined.has(client)) return;
  const prelude = readFileSync(PRELUDE, 'utf8');
  for (const policy of Object.keys(LEASE_LUA) as LeasePolicy[]) {
    const lua = normalise(prelude + '\n' + readFileSync(LEASE_LUA[policy], 'utf8'));
    client.defineCommand(commandName(policy), { numberOfKeys: 1, lua });
  }
  defined.add(client);
}

export interface LeaseReply {
  /** Units taken (0 when refused: fewer than `need` were available). */
  granted: number;
  /** Units left in the shared bucket after the lease. */
  remaining: number;
  resetAfterMs: number;
  /** When refused: milliseconds until `need` units are available. */
  retryAfterMs: number;
  state: string;
}

/** Takes between `need` and `want` units of `key`, or none. */
export async function runLease(client: RedisClient, key: string, rule: Rule, need: number, want: number): Promise<LeaseReply> {
  if (!isLeasable(rule)) throw new Error(`policy ${rule.policy} cannot lease`);
  defineLeaseScripts(client);
  const command = (client as unknown as Record<string, (key: string, ...args: (string | number)[]) => Promise<unknown>>)[commandName(rule.policy)];
  const reply = (await command!.call(client, key, need, '', rule.capacity, rule.refillPerSecond, want)) as [number, number, number, number, number, string];
  return { granted: reply[0], remaining: reply[1], resetAfterMs: reply[2], retryAfterMs: reply[3], state: reply[5] };
}
