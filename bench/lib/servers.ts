// Redis servers for the benches, on free loopback ports, stopped by the
// cleanup registry whatever happens.
import { type RedisServer, startRedis } from '../../test/helpers/redis-server.js';
import { onCleanup } from './cleanup.js';

export type { RedisServer };

export async function benchRedis(extraArgs: string[] = []): Promise<RedisServer & { release(): Promise<void> }> {
  const server = await startRedis(extraArgs);
  const release = onCleanup(() => server.stop());
  return Object.assign(server, { release });
}
