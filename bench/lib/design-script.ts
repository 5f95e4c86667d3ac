// The reference token bucket script (design-token-bucket.lua: one hash of two
// fields per bucket, the script Sluice's own is measured against), called two ways:
// - the floor: a bare ioredis EVALSHA, nothing else around it;
// - Spring-style: the way Spring Cloud Gateway's RedisRateLimiter and the
//   reference client of that script call it: string arguments, EVALSHA
//   with an EVAL resend on NOSCRIPT only, the reply mapped to a decision, and
//   a Redis error failing open (Spring's choice).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

export const DESIGN_LUA = readFileSync(new URL('./design-token-bucket.lua', import.meta.url), 'utf8');
export const DESIGN_SHA = createHash('sha1').update(DESIGN_LUA).digest('hex');

export async function loadDesignScript(client: Redis): Promise<void> {
  await client.script('LOAD', DESIGN_LUA);
}

/** The floor: one EVALSHA per decision, numbers passed as they are. */
export function bareDesignCall(client: Redis, key: string, capacity: number, refillPerSecond: number): Promise<unknown> {
  return client.evalsha(DESIGN_SHA, 1, key, capacity, refillPerSecond);
}

export interface SimpleDecision {
  allowed: boolean;
  remaining: number;
}

/** How many Spring-style calls failed open: a peer figure is only fair when this stays 0. */
export const springFailOpens = { count: 0 };

/** Spring-style: `rl:{tenant}:route` built per call, string args, NOSCRIPT → EVAL, errors fail open. */
export async function springStyleCall(
  client: Redis,
  tenant: string,
  route: string,
  capacity: number,
  refillPerSecond: number,
): Promise<SimpleDecision> {
  const key = 'rl:{' + tenant + '}:' + route;
  const args = [String(capacity), String(refillPerSecond)];
  try {
    let reply: unknown;
    try {
      reply = await client.evalsha(DESIGN_SHA, 1, key, ...args);
    } catch (error) {
      if (!String(error).includes('NOSCRIPT')) throw error;
      reply = await client.eval(DESIGN_LUA, 1, key, ...args);
    }
    const [allowed, remaining] = reply as [number, number];
    return { allowed: allowed === 1, remaining };
  } catch {
    springFailOpens.count++;
    return { allowed: true, remaining: -1 };
  }
}
