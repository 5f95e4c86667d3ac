// The multi-limit script: the limits of one hash slot decided in ONE EVALSHA.
// Built per set of policies from the twins as they are (each wrapped as a
// function of its own KEYS, ARGV and redis) and the driver compose.lua, the
// twin of src/policies/compose.ts. NOSCRIPT resends once as EVAL, which also
// loads the script; combinations are many, so none is preloaded.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Decision } from '../../core/decision.js';
import { capacityOf, type PolicyName } from '../../policies/rule.js';
import { needsBoundaries, ruleAt } from '../../policies/calendar-rule.js';
import { POLICY_REGISTRY, policyOf } from '../../policies/index.js';
import { systemClock } from '../clock.js';
import { coalescerOf } from './coalesce.js';
import { fieldOf, normalise, preludeFor, type RedisClient, redisKeyOf } from './scripts.js';

const DRIVER = new URL('../../policies/compose.lua', import.meta.url);

import type { GroupReply, StoreCall } from '../store.js';

export type { GroupReply, StoreCall } from '../store.js';

interface Script {
  source: string;
  sha: string;
}
const SCRIPTS = new Map<string, Script>();

/** The script for a set of policies, built and hashed once per process. */
export function multiScriptOf(policies: readonly PolicyName[]): Script {
  const names = [...new Set(policies)].sort();
  const id = names.join(',');
  let script = SCRIPTS.get(id);
  if (script === undefined) {
    const wrapped = names.map((name) => {
      const body = readFileSync(POLICY_REGISTRY[name].lua, 'utf8');
      return `sluice_policies['${name}'] = function(KEYS, ARGV, redis)\n${preludeFor(body)}\n${body}\nend`;
    });
    const source = normalise(['local sluice_policies = {}', ...wrapped, readFileSync(DRIVER, 'utf8')].join('\n'));
    script = { source, sha: createHash('sha1').update(source).digest('hex') };
    SCRIPTS.set(id, script);
  }
  return script;
}

function argvOf(calls: readonly StoreCall[], nowUs: number | undefined): (string | number)[] {
  const argv: (string | number)[] = [nowUs === undefined ? '' : nowUs];
  // A calendar rule gets the boundaries around this instance's now; Redis TIME picks the window.
  const instanceNow = calls.some((call) => needsBoundaries(call.rule)) ? (nowUs === undefined ? systemClock() : nowUs / 1000) : 0;
  for (const { bucket, rule, cost, shadow } of calls) {
    const own = [cost, '', ...policyOf(rule).model.luaArgs(ruleAt(rule, instanceNow)), fieldOf(rule.policy, bucket)];
    argv.push(rule.policy, shadow ? 1 : 0, own.length, ...own);
  }
  return argv;
}

function decodeAll(reply: number[], calls: readonly StoreCall[]): GroupReply {
  const decisions = calls.map((call, k): Decision => {
    const at = 1 + k * 5;
    const limit = capacityOf(call.rule);
    return { allowed: reply[at] === 1, remaining: reply[at + 1]!, limit, resetAfterMs: reply[at + 2]!, retryAfterMs: reply[at + 3]!, delayMs: reply[at + 4]!, source: 'redis' };
  });
  return { admitted: reply[0] === 1, decisions };
}

/**
 * Decides `calls` (all in one hash slot) in one script call: every state
 * written, or none. `nowUs` overrides Redis TIME, for the test vectors only.
 */
export async function runAll(client: RedisClient, calls: readonly StoreCall[], nowUs?: number): Promise<GroupReply> {
  const script = multiScriptOf(calls.map((call) => call.rule.policy));
  const keys = calls.map((call) => redisKeyOf(call.rule.policy, call.bucket));
  const args = [...keys, ...argvOf(calls, nowUs)];
  const coalescer = coalescerOf(client);
  coalescer.beforeCommand();
  const sent = client.evalsha(script.sha, keys.length, ...args) as Promise<number[]>;
  coalescer.afterCommand();
  try {
    return decodeAll(await sent, calls);
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('NOSCRIPT'))) throw error;
    return decodeAll((await client.eval(script.source, keys.length, ...args)) as number[], calls);
  }
}
