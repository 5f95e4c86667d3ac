// The script registry: each policy's Lua twin, with the prelude helpers it uses.
// A decision is one EVALSHA; on NOSCRIPT only (a Redis restart, SCRIPT FLUSH or
// a failover to a node that never saw the script) the same call is resent once
// as EVAL, which also loads the script on that node. ioredis's defineCommand
// does the same with two more promises and a closure per call, which the hot
// path would pay on every decision.
//
// Leasing (runLease, below), for hot keys that one Redis slot could not serve
// alone: one call takes a whole batch of units so an instance can spend them locally. It runs the policy's own script (no second
// Lua program to keep in step with the model), asking for the batch: when
// fewer units are left, the lease is refused with the exact time until the
// batch is free, and the leaser's negative cache holds further requests until
// then. So a lease is always one round trip, even when the limit is exhausted
// (taking the dribble of units left would cost a call every few units), and
// the price is that up to batch − 1 units may wait in Redis for a batch.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Decision } from '../../core/decision.js';
import type { BucketKey } from '../../core/ids.js';
import { needsBoundaries, ruleAt } from '../../policies/calendar-rule.js';
import { POLICY_REGISTRY, policyOf } from '../../policies/index.js';
import { capacityOf, POLICIES, type PolicyName, type Rule } from '../../policies/rule.js';
import { systemClock } from '../clock.js';
import type { LeaseReply } from '../store.js';
import { isCluster, type RedisClient } from './client.js';
import { coalescerOf } from './coalesce.js';

export type { RedisClient } from './client.js';

const PRELUDE = new URL('../../policies/prelude.lua', import.meta.url);

/** Whitespace at line starts is dropped so reformatting a file never changes the SHA. */
export function normalise(lua: string): string {
  return lua.replace(/^\s+/gm, '').replace(/^--.*\n/gm, '');
}

/**
 * The prelude's helpers a script needs: each top-level `local NAME` block is
 * kept only when the twin (or a kept block) uses it, since Redis builds every
 * local function anew on each call.
 */
export function preludeFor(body: string): string {
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

interface Script {
  /** The full text (the prelude helpers it uses + twin), as sent to Redis. */
  source: string;
  sha: string;
}
const SCRIPTS = new Map<PolicyName, Script>();

/** A policy's script, read and hashed once per process. */
function scriptOf(policy: PolicyName): Script {
  let script = SCRIPTS.get(policy);
  if (script === undefined) {
    const body = readFileSync(POLICY_REGISTRY[policy].lua, 'utf8');
    // Helpers named only in the twin's comments ("sluice_save, inlined") are not sent: Redis would build them on every call.
    const source = normalise(preludeFor(normalise(body)) + '\n' + body);
    script = { source, sha: createHash('sha1').update(source).digest('hex') };
    SCRIPTS.set(policy, script);
  }
  return script;
}

export const scriptSource = (policy: PolicyName): string => scriptOf(policy).source;
export const scriptSha = (policy: PolicyName): string => scriptOf(policy).sha;

const preloaded = new WeakSet<RedisClient>();

/**
 * Loads every policy's script on each connection as it becomes ready (every
 * master of a cluster, and a replica as soon as a failover makes it one), so
 * the first decisions on a fresh, restarted or promoted node cost no NOSCRIPT
 * round trip. The EVAL resend in `send` stays the safety net (SCRIPT FLUSH, a race).
 */
export function preloadScripts(client: RedisClient): void {
  if (preloaded.has(client)) return;
  preloaded.add(client);
  const watch = (node: Redis) => {
    const load = () => {
      for (const policy of POLICIES) node.script('LOAD', scriptSource(policy)).catch(() => undefined);
    };
    node.on('ready', load);
    if (node.status === 'ready') load();
  };
  if (isCluster(client)) {
    client.on('+node', watch);
    for (const node of client.nodes('all')) watch(node);
    // A cluster connects to a node on its first command: connect them all at once, so the
    // scripts are loaded before the first decision and not in its deadline.
    client.on('ready', () => {
      for (const node of client.nodes('all')) if (node.status === 'wait') node.connect().catch(() => undefined);
    });
  } else {
    watch(client);
  }
}

/**
 * The Redis key a policy keeps `bucket` in: the hash `bucket.hash` (a field of
 * it), or for a policy with a key of its own (the registry's `ownKey`: the
 * sliding log's sorted set), the key `bucket.key`.
 */
export function redisKeyOf(policy: PolicyName, bucket: BucketKey): string {
  return POLICY_REGISTRY[policy].ownKey ? bucket.key : bucket.hash;
}

/** The bucket's field in that hash; '' for a policy with a key of its own. */
export function fieldOf(policy: PolicyName, bucket: BucketKey): string {
  return POLICY_REGISTRY[policy].ownKey ? '' : bucket.field;
}

export interface ScriptReply {
  decision: Decision;
  /** On a peek (cost 0): the state as stored (the model's serialize() form); '' after a decision. */
  state: string;
}

/** { allowed, remaining, resetAfterMs, retryAfterMs?, delayMs?, state? }: trailing 0 and '' may be left off. */
type Reply = [number, number, number, number?, number?, string?];

/** Each rule's parameters in ARGV order, computed once per rule object. */
const argsOf = new WeakMap<Rule, (string | number)[]>();

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.includes('NOSCRIPT');
}

/** One script call: `cost` units of `bucket` under `rule`; `nowUs` (test vectors only) overrides Redis TIME. */
interface ScriptCall {
  readonly bucket: BucketKey;
  readonly rule: Rule;
  readonly cost: number;
  readonly nowUs: number | undefined;
}

/**
 * One EVALSHA of the rule's script on the bucket's storage, the reply mapped by
 * `map`: the hot path of every Redis decision. A NOSCRIPT reply resends it once as EVAL.
 */
function send<T>(client: RedisClient, call: ScriptCall, map: (reply: Reply) => T): Promise<T> {
  const { bucket, rule: given, cost, nowUs } = call;
  // A calendar rule carries the boundaries around this instance's now; the script picks its window by Redis TIME.
  const rule = needsBoundaries(given) ? ruleAt(given, nowUs === undefined ? systemClock() : nowUs / 1000) : given;
  let params = argsOf.get(rule);
  if (params === undefined) {
    params = policyOf(rule).model.luaArgs(rule);
    argsOf.set(rule, params);
  }
  const script = scriptOf(rule.policy);
  const args = [redisKeyOf(rule.policy, bucket), cost, nowUs === undefined ? '' : nowUs, ...params, fieldOf(rule.policy, bucket)];
  const coalescer = coalescerOf(client);
  coalescer.beforeCommand();
  const reply = client.evalsha(script.sha, 1, ...args) as Promise<Reply>;
  coalescer.afterCommand();
  return reply.then(map, (error: unknown) => {
    if (!isNoScript(error)) throw error;
    return (client.eval(script.source, 1, ...args) as Promise<Reply>).then(map);
  });
}

function decode(reply: Reply, limit: number): Decision {
  return {
    allowed: reply[0] === 1,
    remaining: reply[1],
    limit,
    resetAfterMs: reply[2],
    retryAfterMs: reply[3] ?? 0,
    delayMs: reply[4] ?? 0,
    source: 'redis',
  };
}

/** Decides `cost` units of `bucket` in Redis. */
export function runDecision(client: RedisClient, bucket: BucketKey, rule: Rule, cost: number): Promise<Decision> {
  const limit = capacityOf(rule);
  return send(client, { bucket, rule, cost, nowUs: undefined }, (reply) => decode(reply, limit));
}

/**
 * The same, with the reply's state (given on peeks). `nowUs` overrides Redis
 * TIME and exists for the shared test vectors only; production never passes it.
 */
export function runScript(client: RedisClient, bucket: BucketKey, rule: Rule, cost: number, nowUs?: number): Promise<ScriptReply> {
  const limit = capacityOf(rule);
  return send(client, { bucket, rule, cost, nowUs }, (reply) => ({ decision: decode(reply, limit), state: reply[5] ?? '' }));
}

/** Whether `rule`'s policy can lease (the registry's `leasable`: shaping delays requests instead of admitting them in advance). */
export function isLeasable(rule: Rule): boolean {
  return policyOf(rule).leasable;
}

export type { LeaseReply } from '../store.js';

/** Takes max(`need`, `want`) units of `bucket` (at most the rule's capacity) in one call, or none. */
export async function runLease(client: RedisClient, bucket: BucketKey, rule: Rule, need: number, want: number): Promise<LeaseReply> {
  if (!isLeasable(rule)) throw new Error(`policy ${rule.policy} cannot lease`);
  const ask = Math.min(Math.max(need, want), capacityOf(rule));
  const decision = await runDecision(client, bucket, rule, ask);
  return { granted: decision.allowed ? ask : 0, remaining: decision.remaining, resetAfterMs: decision.resetAfterMs, retryAfterMs: decision.retryAfterMs };
}
