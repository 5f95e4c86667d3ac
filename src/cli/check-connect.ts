// `sluice check --connect`: after the file, the connections it names, made as
// `sluice start` makes them (TLS, ACL user, Sentinel, PostgreSQL's sslmode),
// and one call each that needs what serving needs: a bucket script on an
// `rl:` key and a read of the `{meta}` keys on Redis, `SELECT 1` on PostgreSQL.
// Nothing is served; each line names the server and, on failure, why.
import type { SluiceConfig } from '../config/types.js';
import { bucketKey } from '../core/ids.js';
import { parseRule } from '../policies/rule.js';
import { INSTANCES_KEY } from '../cluster/meta-keys.js';
import { PostgresRuleStore } from '../rules/postgres/store.js';
import { describePgConnectError } from '../rules/postgres/connection.js';
import { describeUrl } from '../rules/postgres/errors.js';
import { redisTargetOf } from '../config/redis-target.js';
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import { describeRedisError } from '../stores/redis/connection-problem.js';
import { RedisStore } from '../stores/redis-store.js';

export interface ConnectionCheck {
  /** The server, without credentials: `redis 10.0.0.5:6380 (tls, user sluice)`. */
  target: string;
  /** undefined = it worked; else why not. */
  problem: string | undefined;
}

const PROBE_RULE = parseRule({ policy: 'token_bucket', capacity: 1, refillPerSecond: 1 });

export async function checkConnections(config: SluiceConfig, timeoutMs: number): Promise<ConnectionCheck[]> {
  const checks: Promise<ConnectionCheck>[] = [];
  const redis = redisTargetOf(config.store);
  if (redis) checks.push(checkRedis(redis, timeoutMs));
  if (config.database.url) checks.push(checkPostgres(config, timeoutMs));
  return Promise.all(checks);
}

async function checkRedis(target: RedisTarget, timeoutMs: number): Promise<ConnectionCheck> {
  const store = new RedisStore(connectRedis(target));
  const failed = new Promise<never>((_resolve, reject) => store.problem.onChange((reason) => reason !== undefined && reject(new Error(reason))));
  try {
    await within(timeoutMs, Promise.race([failed, probeRedis(store)]));
    return { target: describeRedis(target), problem: undefined };
  } catch (error) {
    const reason = store.problem.reason ?? describeRedisError(error as Error);
    return { target: describeRedis(target), problem: target.cluster && !store.problem.reason ? await clusterSeedProblem(target, reason) : reason };
  } finally {
    failed.catch(() => undefined);
    store.client.disconnect();
  }
}

/**
 * A cluster client whose ready check (CLUSTER INFO) is refused reconnects
 * without an error event; asking the first seed directly, as the same user,
 * names the refusal.
 */
async function clusterSeedProblem(target: RedisTarget, fallback: string): Promise<string> {
  const { cluster, ...credentials } = target;
  const seed = connectRedis({ ...credentials, url: `redis://${cluster![0]}` });
  seed.on('error', () => undefined);
  try {
    await within(2000, seed.cluster('INFO'));
    return fallback;
  } catch (error) {
    return describeRedisError(error as Error);
  } finally {
    seed.disconnect();
  }
}

/** A peek (cost 0) runs the bucket script on an `rl:` key; a scripted ZCARD reads the membership key. */
async function probeRedis(store: RedisStore): Promise<void> {
  await store.peek(bucketKey('~sluice-check', 'connect'), PROBE_RULE);
  await store.client.eval("return redis.call('ZCARD', KEYS[1])", 1, INSTANCES_KEY);
}

async function checkPostgres(config: SluiceConfig, timeoutMs: number): Promise<ConnectionCheck> {
  const { url, tls, password, connectTimeoutMs } = config.database;
  const store = new PostgresRuleStore({ connectionString: url!, connection: { tls, password }, connectTimeoutMs });
  const target = `${describeUrl(url!)}${tls ? ` (tls ${tls.mode})` : ''}`;
  try {
    await store.ping(timeoutMs);
    return { target, problem: undefined };
  } catch (error) {
    return { target, problem: describePgConnectError(error as Error) };
  } finally {
    await store.close();
  }
}

function describeRedis(target: RedisTarget): string {
  const where = target.cluster
    ? `redis cluster ${target.cluster.join(',')}`
    : target.sentinel
      ? `redis sentinel master ${target.sentinel.name} via ${target.sentinel.sentinels.join(',')}`
      : `redis ${hostOf(target.url ?? '')}`;
  const tls = target.tls !== undefined || target.url?.startsWith('rediss://');
  const notes = [...(tls ? ['tls'] : []), ...(target.username !== undefined ? [`user ${target.username}`] : [])];
  return notes.length > 0 ? `${where} (${notes.join(', ')})` : where;
}

/** host:port of a redis:// URL, never its user or password. */
function hostOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 6379}`;
  } catch {
    return '(unparsable store.url)';
  }
}

function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
