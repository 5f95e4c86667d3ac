// What Redis itself says: per-command call counts and server time
// (INFO commandstats), memory (INFO memory), and the reset between runs.
import type { Redis } from 'ioredis';

export interface CommandStat {
  calls: number;
  usec: number;
  usecPerCall: number;
}

export async function resetStats(client: Redis): Promise<void> {
  await client.config('RESETSTAT');
}

export async function commandStats(client: Redis): Promise<Map<string, CommandStat>> {
  const text = await client.info('commandstats');
  const stats = new Map<string, CommandStat>();
  for (const line of text.split('\n')) {
    const match = /^cmdstat_([^:]+):(.*)$/.exec(line.trim());
    if (!match) continue;
    const fields = Object.fromEntries(match[2]!.split(',').map((pair) => pair.split('=') as [string, string]));
    stats.set(match[1]!, { calls: Number(fields.calls), usec: Number(fields.usec), usecPerCall: Number(fields.usec_per_call) });
  }
  return stats;
}

/** Calls of the script commands (EVALSHA and EVAL), which is what one decision costs in round trips. */
export async function scriptCalls(client: Redis): Promise<CommandStat> {
  const stats = await commandStats(client);
  const a = stats.get('evalsha') ?? { calls: 0, usec: 0, usecPerCall: 0 };
  const b = stats.get('eval') ?? { calls: 0, usec: 0, usecPerCall: 0 };
  const calls = a.calls + b.calls;
  const usec = a.usec + b.usec;
  return { calls, usec, usecPerCall: calls ? usec / calls : 0 };
}

export async function usedMemory(client: Redis): Promise<number> {
  const text = await client.info('memory');
  const match = /used_memory:(\d+)/.exec(text);
  return match ? Number(match[1]) : Number.NaN;
}

export async function redisVersion(client: Redis): Promise<string> {
  const text = await client.info('server');
  return /redis_version:([^\r\n]+)/.exec(text)?.[1] ?? 'unknown';
}
