// When Redis itself ran each decision: a MONITOR connection sees every command
// with Redis's own clock, so the accuracy bench can run each policy's model
// over the instants Redis decided at, whatever the load did to the senders'
// schedule. Only one-unit decisions (EVALSHA of a policy's decision script,
// cost 1) count: peeks, leases and adjusts are not requests.
import type { Redis } from 'ioredis';
import { POLICIES } from '../../src/policies/rule.js';
import { scriptSha } from '../../src/stores/redis/scripts.js';

export interface RedisTimes {
  /** Stops watching; resolves with each tenant's decision instants (epoch ms), in Redis's order. */
  stop(): Promise<Map<string, number[]>>;
}

export async function watchRedisTimes(client: Redis): Promise<RedisTimes> {
  const decisionShas = new Set(POLICIES.map((policy) => scriptSha(policy)));
  const times = new Map<string, number[]>();
  const monitor = await client.monitor();
  monitor.on('monitor', (time: string, args: string[], source: string) => {
    if (source === 'lua' || args[0]?.toLowerCase() !== 'evalsha' || !decisionShas.has(args[1] ?? '') || args[4] !== '1') return;
    const tenant = /\{([^}]*)\}/.exec(args[3] ?? '')?.[1];
    if (tenant === undefined) return;
    const list = times.get(tenant) ?? [];
    if (list.length === 0) times.set(tenant, list);
    list.push(Number(time) * 1000);
  });
  return {
    async stop() {
      monitor.disconnect();
      return times;
    },
  };
}
