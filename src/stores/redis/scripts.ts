// The script registry: each policy's Lua twin, with the prelude helpers it uses, defined
// once per client as an ioredis command. ioredis sends EVALSHA and, on NOSCRIPT
// only (a Redis restart, SCRIPT FLUSH or a failover to a node that never saw the
// script), resends the body with EVAL, per node in a cluster.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';
import type { Decision } from '../../core/decision.js';
import { type PolicyName, POLICIES, type Rule } from '../../core/rule.js';
import { POLICY_REGISTRY, policyOf } from '../../policies/index.js';
import { capacityOf } from '../../core/rule.js';

export type RedisClient = Redis | Cluster;

const PRELUDE = new URL('../../policies/prelude.lua', import.meta.url);

/** Whitespace at line starts is dropped so reformatting a file never changes the SHA. */
function normalise(lua: string): string {
  return lua.replace(/^\s+/gm, '').replace(/^--.*\n/gm, '');
}

/**
 * The prelude's helpers a script needs: each top-level `local NAME` block is
 * kept only when the twin (or a kept block) uses it, since Redis builds every
 * local function anew on each call.
 */
function preludeFor(body: string): string {
  const blocks = readFileSync(PRELUDE, 'utf8')
    .split(/\n(?=local )/)
    .filter((block) => block.startsWith('local '))
    .map((block) => ({ name: /^local (?:function )?(\w+)/.exec(block)![1]!, block }));
  const needed = new Set<string>();
  let text = body;
  for (let grew = true; grew; ) {
    grew = false;
    for (const { name, block } of blocks) {
      if (!needed.has(name) && new RegExp(`\\b${name}\\b`).test(text)) {
        needed.add(name);
        text += `\n${block}`;
        grew = true;
      }
    }
  }
  return blocks.filter(({ name }) => needed.has(name)).map(({ block }) => block).join('\n');
}

const sources = new Map<string, string>();

/** The full text of a policy's script (the prelude helpers it uses + twin), as sent to Redis. */
export function scriptSource(policy: PolicyName): string {
  let source = sources.get(policy);
  if (source === undefined) {
    const body = readFileSync(POLICY_REGISTRY[policy].lua, 'utf8');
    source = normalise(preludeFor(body) + '\n' + body);
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
  decision: Decision;
  /** On a peek (cost 0): the state as stored (the model's serialize() form); '' after a decision. */
  state: string;
}

type Reply = [number, number, number, number, number, string];
type ScriptCommand = (key: string, ...args: (string | number)[]) => Promise<Reply>;

const COMMAND = Object.fromEntries(POLICIES.map((policy) => [policy, commandName(policy)])) as Record<PolicyName, string>;
/** Each rule's parameters in ARGV order, computed once per rule object. */
const argsOf = new WeakMap<Rule, (string | number)[]>();

/** One EVALSHA of the rule's script on the bucket's storage; the hot path of every Redis decision. */
function send(client: RedisClient, key: string, rule: Rule, cost: number, nowUs: number | undefined): Promise<Reply> {
  defineScripts(client);
  let params = argsOf.get(rule);
  if (params === undefined) {
    params = policyOf(rule).model.luaArgs(rule);
    argsOf.set(rule, params);
  }
  const { redisKey, field } = storageOf(rule.policy, key);
  const command = (client as unknown as Record<string, ScriptCommand>)[COMMAND[rule.policy]]!;
  return command.call(client, redisKey, cost, nowUs === undefined ? '' : nowUs, ...params, field);
}

function decode(reply: Reply, limit: number): Decision {
  return { allowed: reply[0] === 1, remaining: reply[1], limit, resetAfterMs: reply[2], retryAfterMs: reply[3], delayMs: reply[4], source: 'redis' };
}

/** Decides `cost` units of `key` in Redis. */
export function runDecision(client: RedisClient, key: string, rule: Rule, cost: number): Promise<Decision> {
  const limit = capacityOf(rule);
  return send(client, key, rule, cost, undefined).then((reply) => decode(reply, limit));
}

/**
 * The same, with the reply's state (given on peeks). `nowUs` overrides Redis
 * TIME and exists for the shared test vectors only; production never passes it.
 */
export function runScript(client: RedisClient, key: string, rule: Rule, cost: number, nowUs?: number): Promise<ScriptReply> {
  const limit = capacityOf(rule);
  return send(client, key, rule, cost, nowUs).then((reply) => ({ decision: decode(reply, limit), state: reply[5] }));
}
