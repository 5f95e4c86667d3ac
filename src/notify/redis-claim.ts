// The cluster-wide claim of an event: `SET key 1 NX PX ttl` on the store's
// Redis, on a connection of its own opened at the first claim (a config with
// no notify never connects). The first instance to set the key sends.
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import type { RedisClient } from '../stores/redis/client.js';
import type { Claim } from './sender.js';

export class RedisClaims {
  private client: RedisClient | undefined;

  constructor(private readonly target: RedisTarget) {}

  readonly claim: Claim = async (key, ttlMs) => {
    if (this.client === undefined) {
      this.client = connectRedis(this.target);
      this.client.on('error', () => undefined); // a failed claim is reported by the sender; ioredis reconnects
    }
    return (await this.client.set(key, '1', 'PX', Math.max(1, Math.round(ttlMs)), 'NX')) === 'OK';
  };

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.quit().catch(() => client.disconnect());
  }
}
