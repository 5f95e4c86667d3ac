// The adjust scripts: take (or give back) units from a bucket whatever its
// limit, the Lua twins of the models' adjust(). Rare calls (late replies,
// charges after an outage), so each goes as EVALSHA with one EVAL resend on
// NOSCRIPT, and the scripts are not preloaded.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { BucketKey } from '../../core/ids.js';
import type { Rule } from '../../policies/rule.js';
import { ruleAt } from '../../policies/calendar-rule.js';
import { policyOf } from '../../policies/index.js';
import { systemClock } from '../clock.js';
import { fieldOf, normalise, preludeFor, type RedisClient, redisKeyOf } from './scripts.js';

interface Script {
  source: string;
  sha: string;
}
const SCRIPTS = new Map<string, Script>();

function adjustScriptOf(url: URL): Script {
  let script = SCRIPTS.get(url.href);
  if (script === undefined) {
    const body = readFileSync(url, 'utf8');
    const source = normalise(`${preludeFor(body)}\n${body}`);
    script = { source, sha: createHash('sha1').update(source).digest('hex') };
    SCRIPTS.set(url.href, script);
  }
  return script;
}

/** Whether the rule's policy can be adjusted (time-based policies). */
export function canAdjust(rule: Rule): boolean {
  return policyOf(rule).adjustLua !== undefined;
}

/**
 * Takes `delta` units from the bucket whatever its limit (negative: gives them
 * back); resolves with the state written. `nowUs` is for the test vectors only.
 */
export async function runAdjust(client: RedisClient, bucket: BucketKey, rule: Rule, delta: number, nowUs?: number): Promise<string> {
  const entry = policyOf(rule);
  if (entry.adjustLua === undefined) throw new Error(`policy ${rule.policy} has no adjust`);
  const script = adjustScriptOf(entry.adjustLua);
  const args = [redisKeyOf(rule.policy, bucket), delta, nowUs === undefined ? '' : nowUs, ...entry.model.luaArgs(ruleAt(rule, nowUs === undefined ? systemClock() : nowUs / 1000)), fieldOf(rule.policy, bucket)];
  try {
    return (await client.evalsha(script.sha, 1, ...args)) as string;
  } catch (error) {
    if (!(error instanceof Error && error.message.includes('NOSCRIPT'))) throw error;
    return (await client.eval(script.source, 1, ...args)) as string;
  }
}
