// The reference's variables that Sluice accepts and does not use, each with
// why: logged once at start when set, never an error.
import type { Env } from '../../config/env.js';
import { isSet } from './env-values.js';

const STATSD = 'Sluice serves Prometheus only (USE_PROMETHEUS)';
const POOL = 'Sluice keeps one pipelined connection per Redis node and batches calls itself';
const PER_SECOND = 'Sluice has one store for every unit';
const MEMCACHE = 'Sluice stores buckets in Redis (REDIS_URL) or in memory';
const TRACING = 'Sluice does not export traces';

export const IGNORED_VARIABLES: Readonly<Record<string, string>> = {
  USE_STATSD: STATSD,
  STATSD_HOST: STATSD,
  STATSD_PORT: STATSD,
  USE_DOG_STATSD: STATSD,
  USE_DOG_STATSD_MOGRIFIERS: STATSD,
  EXTRA_TAGS: STATSD,
  STATS_FLUSH_INTERVAL: 'Prometheus is scraped, not flushed',
  DISABLE_STATS: 'the Prometheus listener is off unless USE_PROMETHEUS=true',
  PROMETHEUS_MAPPER_YAML: "Sluice serves the built-in mapper's series only",
  EXPIRATION_JITTER_MAX_SECONDS: "Sluice's buckets expire when full again",
  LOCAL_CACHE_SIZE_IN_BYTES: "Sluice's own negative cache is always on (resilience.negativeCacheSize)",
  CACHE_KEY_PREFIX: 'Sluice names its own keys (~rls. and a hash)',
  BACKEND_TYPE: MEMCACHE,
  STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'Sluice never charges a refused request (as with true)',
  LIMIT_RESPONSE_HEADERS_ENABLED: 'X-RateLimit-* headers are always sent in response_headers_to_add',
  LIMIT_LIMIT_HEADER: 'X-RateLimit-* headers are always sent in response_headers_to_add',
  LIMIT_REMAINING_HEADER: 'X-RateLimit-* headers are always sent in response_headers_to_add',
  LIMIT_RESET_HEADER: 'X-RateLimit-* headers are always sent in response_headers_to_add',
  HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: '/healthcheck is 200 once the config folder loaded at start',
  REDIS_POOL_SIZE: POOL,
  REDIS_PIPELINE_WINDOW: POOL,
  REDIS_PIPELINE_LIMIT: POOL,
  REDIS_CLUSTER_PIPELINE_PARALLELISM: POOL,
  REDIS_POOL_ON_EMPTY_BEHAVIOR: POOL,
  REDIS_HEALTH_CHECK_ACTIVE_CONNECTION: "Sluice's breaker watches every call",
  REDIS_TIMEOUT: 'the budget of a Redis call is store.deadlineMs (SLUICE_STORE_DEADLINE_MS)',
  REDIS_STARTUP_INITIAL_INTERVAL: 'Sluice starts without waiting for Redis; the fallback decides meanwhile',
  REDIS_STARTUP_MAX_INTERVAL: 'Sluice starts without waiting for Redis; the fallback decides meanwhile',
  REDIS_STARTUP_MAX_ELAPSED_TIME: 'Sluice starts without waiting for Redis; the fallback decides meanwhile',
  REDIS_PERSECOND: PER_SECOND,
  REDIS_PERSECOND_SOCKET_TYPE: PER_SECOND,
  REDIS_PERSECOND_TYPE: PER_SECOND,
  REDIS_PERSECOND_URL: PER_SECOND,
  REDIS_PERSECOND_POOL_SIZE: PER_SECOND,
  REDIS_PERSECOND_AUTH: PER_SECOND,
  REDIS_PERSECOND_TLS: PER_SECOND,
  REDIS_PERSECOND_SENTINEL_AUTH: PER_SECOND,
  REDIS_PERSECOND_PIPELINE_WINDOW: PER_SECOND,
  REDIS_PERSECOND_PIPELINE_LIMIT: PER_SECOND,
  REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM: PER_SECOND,
  REDIS_PERSECOND_TIMEOUT: PER_SECOND,
  REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR: PER_SECOND,
  MEMCACHE_HOST_PORT: MEMCACHE,
  MEMCACHE_MAX_IDLE_CONNS: MEMCACHE,
  MEMCACHE_SRV: MEMCACHE,
  MEMCACHE_SRV_REFRESH: MEMCACHE,
  MEMCACHE_TLS: MEMCACHE,
  MEMCACHE_TLS_CLIENT_CERT: MEMCACHE,
  MEMCACHE_TLS_CLIENT_KEY: MEMCACHE,
  MEMCACHE_TLS_CACERT: MEMCACHE,
  MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION: MEMCACHE,
  QUOTA_MODE: 'quota_mode is read per descriptor',
  RESPONSE_DYNAMIC_METADATA: 'Sluice sends no dynamic metadata',
  TRACING_ENABLED: TRACING,
  TRACING_SERVICE_NAME: TRACING,
  TRACING_SERVICE_NAMESPACE: TRACING,
  TRACING_SERVICE_INSTANCE_ID: TRACING,
  TRACING_EXPORTER_PROTOCOL: TRACING,
  TRACING_SAMPLING_RATE: TRACING,
};

/** The set ones, with why each is not used. */
export function ignoredVariablesSet(env: Env): { variable: string; reason: string }[] {
  const named = Object.entries(IGNORED_VARIABLES).filter(([variable]) => isSet(env, variable));
  // DogStatsD's mogrifiers are named after the user's own: DOG_STATSD_MOGRIFIER_<NAME>_PATTERN…
  const mogrifiers = Object.keys(env).filter((variable) => variable.startsWith('DOG_STATSD_MOGRIFIER') && isSet(env, variable)).map((variable): [string, string] => [variable, STATSD]);
  return [...named, ...mogrifiers].map(([variable, reason]) => ({ variable, reason }));
}
