// Why the Redis connection does not work, named for an operator: a refused
// password or ACL user, a failed TLS handshake, a TLS/plain port mix-up, an
// unreachable server. Kept from the client's error events until it is ready
// again, for /readyz and for the one error line logged per new reason.
import { isCluster, type RedisClient } from './client.js';

/** The reason an error names, with what to check. */
export function describeRedisError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  const text = error.message;
  if (text.startsWith('All sentinels are unreachable')) return `the sentinels refused or could not be reached (${text}); check store.sentinel (sentinels, password, tls)`;
  if (text.startsWith('WRONGPASS')) return 'authentication refused (WRONGPASS): wrong password, unknown ACL user or disabled user; check store.username and store.password';
  if (text.startsWith('NOAUTH')) return 'authentication required (NOAUTH): this Redis needs a password; set store.password or store.passwordFile';
  if (text.startsWith('NOPERM') || text.includes("can't run this command")) return `the ACL user may not do what Sluice needs (${text}); grant the ACL of docs/redis.md#acl-user`;
  if (/CERT|SSL|TLS|UNABLE_TO_|SELF_SIGNED/.test(code) || /handshake|certificate/i.test(text)) return `TLS handshake failed (${code || 'TLS'}): ${text}; check store.tls (ca, servername)`;
  if (code === 'ECONNRESET') return 'connection reset by Redis (ECONNRESET): a TLS port reached without store.tls, or Redis closing connections';
  if (code === 'ECONNREFUSED') return `Redis unreachable (ECONNREFUSED): ${text}`;
  if (code === 'ETIMEDOUT') return 'connecting to Redis timed out (ETIMEDOUT): unreachable, or a plain port reached with store.tls';
  return text;
}

/** Why connecting fails, and whether the client has ever been ready (a refused password at start: it has not). */
export interface StoreProblem {
  reason: string;
  neverConnected: boolean;
}

export class ConnectionProblem {
  private current: string | undefined;
  private everReady = false;
  private readonly listeners = new Set<(reason: string | undefined) => void>();

  constructor(client: RedisClient) {
    // A cluster's "failed to refresh slots" carries the node's error that says why.
    client.on('error', (error: Error & { lastNodeError?: Error }) => this.set(describeRedisError(error.lastNodeError ?? error)));
    client.on('ready', () => {
      this.everReady = true;
      this.set(undefined);
    });
    if (isCluster(client)) client.on('node error', (error: Error) => this.set(describeRedisError(error)));
  }

  /** The reason the last connection attempt failed; undefined once Redis is ready. */
  get reason(): string | undefined {
    return this.current;
  }

  /** The reason, with whether any connection ever worked. */
  get problem(): StoreProblem | undefined {
    return this.current === undefined ? undefined : { reason: this.current, neverConnected: !this.everReady };
  }

  /** Called with each new reason (and undefined when the connection works again). */
  onChange(listener: (reason: string | undefined) => void): void {
    this.listeners.add(listener);
  }

  private set(reason: string | undefined): void {
    if (reason === this.current) return;
    this.current = reason;
    for (const listener of this.listeners) listener(reason);
  }
}
