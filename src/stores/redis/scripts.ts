// The script registry: each policy's Lua twin, with the shared prelude, defined
// once per client as an ioredis command. ioredis sends EVALSHA and, on NOSCRIPT
// only (a Redis restart, SCRIPT FLUSH or a failover to a node that never saw the
// script), resends the body with EVAL, per node in a cluster.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';
import type { ModelDecision } from '../../core/decision.js';
import type { PolicyName, Rule } from '../../core/rule.js';
import { POLICY_REGISTRY, policyOf } from '../../policies/index.js';
import { capacityOf } from '../../core/rule.js';

export type RedisClient = Redis | Cluster;

const PRELUDE = new URL('../../policies/prelude.lua', import.meta.url);

/** Whitespace at line starts is dropped so reformatting a file never changes the SHA. */
function normalise(lua: string): string {
  return lua.replace(/^\s+/gm, '').replace(/^--.*\n/gm, '');
}

const sources = new Map<string, string>();

/** The full text of a policy's script (prelude + twin), as sent to Redis. */
export function scriptSource(policy: PolicyName): string {
  let source = sources.get(policy);
  if (source === undefined) {
    source = normalise(readFileSync(PRELUDE, 'utf8') + '\n' + readFileSync(POLICY_REGISTRY[policy].lua, 'utf8'));
    sources.set(policy, source);
  }
  return source;
}

export function scriptSha(policy: PolicyName): string {
  return createHash('sha1').update(scriptSource(policy)).digest('hex');
}

const commandName = (policy: PolicyName) => `sluice_${policy}`;
const defined = new WeakSet<object>();

/** Defines every registered policy's script on the client (idempotent). */
export function defineScripts(client: RedisClient): void {
  if (defined.has(client)) return;
  for (const policy of Object.keys(POLICY_REGISTRY) as PolicyName[]) {
    client.defineCommand(commandName(policy), { numberOfKeys: 1, lua: scriptSource(policy) });
  }
  defined.add(client);
}

/**
 * Where a bucket lives in Redis. Bucket `rl:{tenant}:route` is field `route` of
 * the tenant's hash `rl:{tenant}` (same hash tag, same slot); the sliding log,
 * a sorted set, keeps its own key. Keys without a hash tag (shards) are a hash
 * of one field.
 */
export function storageOf(policy: PolicyName, key: string): { redisKey: string; field: string } {
  if (policy === 'sliding_window_log') return { redisKey: key, field: '' };
  const close = key.startsWith('rl:{') ? key.indexOf('}:') : -1;
  if (close < 0) return { redisKey: key, field: '_' };
  return { redisKey: key.slice(0, close + 1), field: key.slice(close + 2) };
}

export interface ScriptReply {
  decision: ModelDecision;
  /** The state as the script stored it (the model's serialize() form). */
  state: string;
}

/**
 * Runs a rule's script on one key. `nowUs` overrides Redis TIME and exists for
 * the shared test vectors only; production callers never pass it.
 */
export async function runScript(client: RedisClient, key: string, rule: Rule, cost: number, nowUs?: number): Promise<ScriptReply> {
  defineScripts(client);
  const { redisKey, field } = storageOf(rule.policy, key);
  const args = [cost, nowUs === undefined ? '' : String(nowUs), ...policyOf(rule).model.luaArgs(rule), field];
  const command = (client as unknown as Record<string, (key: string, ...args: (string | number)[]) => Promise<unknown>>)[commandName(rule.policy)];
  const reply = (await command!.call(client, redisKey, ...args)) as [number, number, number, number, number, string];
  return {
    decision: {
      allowed: reply[0] === 1,
      remaining: reply[1],
      limit: capacityOf(rule),
      resetAfterMs: reply[2],
      retryAfterMs: reply[3],
      delayMs: reply[4],
    },
    state: reply[5],
  };
}
