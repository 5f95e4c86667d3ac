// Tenant, route and limiter ids, and the Redis key layout built from them.
// Ids are validated before they reach a key, so `{`, `}`, `:`, spaces or control
// characters can never move a bucket into another tenant's hash slot or key.
import { createHash } from 'node:crypto';
import { SluiceError } from './errors.js';

export const MAX_ID_LENGTH = 64;
const ID_PATTERN = /^[A-Za-z0-9._~@+-]+$/;

/** Throws a SluiceError naming `field` when `id` is not a valid id. */
export function assertValidId(id: unknown, field: string): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new SluiceError('ERR_ID_INVALID', 'must be a non-empty string', field);
  }
  if (id.length > MAX_ID_LENGTH) {
    throw new SluiceError('ERR_ID_INVALID', `must be at most ${MAX_ID_LENGTH} characters`, field);
  }
  if (!ID_PATTERN.test(id)) {
    throw new SluiceError(
      'ERR_ID_INVALID',
      'may contain only letters, digits and . _ ~ @ + - (no braces, colons, spaces or control characters)',
      field,
    );
  }
}

export function isValidId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_ID_LENGTH && ID_PATTERN.test(id);
}

/**
 * A bucket by its ids, `rl:{tag}:name`: the one shape a limit names its bucket
 * in, from a request's limits (and the library's, the adapters') down to the
 * engine, which builds its key once (BucketKey, below); bucketKey checks both
 * ids as it does.
 */
export interface Bucket {
  /** The limit's hash tag (the tenant, a client address...): buckets of one tag share a cluster slot. */
  readonly tag: string;
  /** The bucket's name under its tag (the route, a limit id): with the tag, what the dashboard and traces show. */
  readonly name: string;
}

/**
 * Where a bucket lives, built once from its ids and handed down to the store
 * as is (no one parses a key back). `key` is the bucket's id: the memory
 * store's and the fallback's map key, and the Redis key of a layout that keeps
 * its own key (the sliding log's sorted set). The hash layouts keep the bucket
 * as field `field` of the Redis hash `hash`. A BucketKey is a Bucket: one that
 * bucketKey built, handed to the engine, is used as is (keyOfBucket).
 */
export interface BucketKey extends Bucket {
  readonly key: string;
  readonly hash: string;
  readonly field: string;
}

/** The one field of a hash that holds a single bucket (shards, derived buckets). */
const LONE_FIELD = '_';

/**
 * `rl:{tenant}:route`: the tenant is the hash tag, so one tenant's buckets share
 * a cluster slot, as fields of the hash `rl:{tenant}`.
 * A derived name (`~…`, one per client address under a tenant) gets a key of
 * its own in the same slot, `rl:{tenant}~ip.…`: as a field it would keep the
 * tenant's hash alive and growing for as long as the tenant is busy.
 */
export function bucketKey(tenant: string, route: string): BucketKey {
  assertValidId(tenant, 'tenant');
  assertValidId(route, 'route');
  if (route.startsWith(DERIVED_PREFIX)) {
    const key = `rl:{${tenant}}${route}`;
    return built({ tag: tenant, name: route, key, hash: key, field: LONE_FIELD });
  }
  const hash = `rl:{${tenant}}`;
  return built({ tag: tenant, name: route, key: `${hash}:${route}`, hash, field: route });
}

/**
 * The keys bucketKey built, and only those: a caller's object that merely has
 * a `key` (a library user's, any JavaScript) is no proof its ids were checked,
 * and its key is built again from its ids, which are.
 */
const BUILT_KEYS = new WeakSet<BucketKey>();

function built(key: BucketKey): BucketKey {
  BUILT_KEYS.add(key);
  return key;
}

/** The bucket's key: the bucket itself when bucketKey built it, else built (and its ids checked) from its tag and name. */
export function keyOfBucket(bucket: Bucket): BucketKey {
  return BUILT_KEYS.has(bucket as BucketKey) ? (bucket as BucketKey) : bucketKey(bucket.tag, bucket.name);
}

/** Sub-bucket `i` of a sharded limit. No hash tag, so shards spread over cluster nodes. */
export function shardKey(tenant: string, route: string, shard: number): BucketKey {
  assertValidId(tenant, 'tenant');
  assertValidId(route, 'route');
  const key = `rl:${tenant}:${route}:${shard}`;
  return { tag: tenant, name: route, key, hash: key, field: LONE_FIELD };
}

/** Derived ids (bucket identities built from a request, not named by an operator) start with this. */
export const DERIVED_PREFIX = '~';

/**
 * A derived id: `~`, a kind (`ip.`, `ip6.`, `h.` …) and a body. Tenant ids may
 * not start with `~`, so a derived id can never name, or share a bucket with,
 * a configured tenant. Throws when the result is not a valid id.
 */
export function derivedId(kind: string, body: string): string {
  const id = DERIVED_PREFIX + kind + body;
  assertValidId(id, 'derived id');
  return id;
}

/** `~h.` and 128 bits of the value's SHA-256: the raw value (an API key, an email) never reaches a key or a log. */
export function hashedId(value: string): string {
  return derivedId('h.', createHash('sha256').update(value).digest('hex').slice(0, 32));
}

/** A header's value as a bucket id: hashed, as the adapters key an API key. */
export const headerBucketId = hashedId;

/**
 * The bucket id of a caller's key: the key itself when it is an id that does
 * not start with `~` (so it can name no derived bucket), else its hash. Any
 * non-empty string is accepted: `org:42` or an address is a key, never an error.
 */
export function keyId(key: unknown, field = 'key'): string {
  if (typeof key !== 'string' || key.length === 0) throw new SluiceError('ERR_ID_INVALID', 'must be a non-empty string', field);
  return isValidId(key) && !key.startsWith(DERIVED_PREFIX) ? key : hashedId(key);
}

/** The bucket tag every route-keyed limit shares: one ceiling per limit id, whoever asks. */
export const ROUTE_TAG = derivedId('route', '');

/**
 * The sorted set of a concurrency limit's leases: the bucket's key (so its
 * hash tag, the tenant's or a derived id's slot) with `:cc` after it. Ids hold
 * no `:`, so no rate bucket's key can ever equal it.
 */
export function slotKey(tag: string, name: string): string {
  return `${bucketKey(tag, name).key}:cc`;
}

// The penalty box's state (policies/penalty/) sits beside its bucket under another prefix.
/** Refuses anything but a penalty key, so a lift can never delete another key. */
export function assertPenaltyKey(key: string): void {
  if (!/^pb:\{[^{}]+\}/.test(key)) throw new SluiceError('ERR_ID_INVALID', 'must be a penalty key as listed (pb:{tag}…)', 'key');
}

/** `pb:{tenant}…`: the bucket's key with another prefix, so it keeps the bucket's hash tag (and slot). */
export function penaltyKeyOf(bucket: BucketKey): string {
  return `pb:${bucket.key.slice('rl:'.length)}`;
}

/** The bucket key (`rl:{tag}:name`) of a penalty key: the inverse of penaltyKeyOf. */
export function bucketKeyOfPenalty(key: string): string {
  return `rl:${key.slice('pb:'.length)}`;
}
