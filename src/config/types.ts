// The loaded configuration: typed, defaults filled, keys hashed, frozen. Where
// a loaded field is the file's option as the schema outputs it (defaults
// filled), its type is the schema's (z.output), so an option's type is defined
// once; the rest (addresses parsed, files read, keys hashed) is written out.
import type { z } from 'zod';
import type { JwtAuthConfig } from '../auth/jwt-config.js';
import type { Rule } from '../policies/rule.js';
import type { ResilienceConfig } from '../limiter/engine/resilience-config.js';
import type { ClientIpConfig, ConcurrencyLimitConfig, LimitConfig } from '../request-limits/types.js';
import type { ListEntry } from '../lists/types.js';
import type { SeedRule, TenantKey } from '../rules/types.js';
import type { NotificationsConfig } from '../notify/config.js';
import type { DecisionServiceConfig } from './decision-service.js';
import type { ListenAddress } from './listen-address.js';
import type { UpstreamInstance } from './route-forwarding.js';
import type { TlsConfig } from './tls.js';
import type { TracingFileConfig } from './tracing-schema.js';
import type { healthCheckSchema, headerEditsSchema } from './route-forwarding.js';
import type { databaseSchema, headersSchema, limitsSchema, logSchema, routeSchema, storeSchema, tenantsSchema } from './schema.js';

export type { SeedRule, TenantKey } from '../rules/types.js';
export type { DecisionServiceConfig } from './decision-service.js';
export type { ListenAddress } from './listen-address.js';

/** The route's options as the schema outputs them; upstreams, methods, retries and limits are written out below. */
type RouteOptions = Pick<Out<typeof routeSchema>, 'id' | 'path' | 'host' | 'stripPrefix' | 'caseInsensitive' | 'rewrite' | 'timeoutMs' | 'anonymous' | 'cost'>;

export interface RouteConfig extends RouteOptions {
  /** Upper-case methods; undefined means any method. */
  readonly methods: readonly string[] | undefined;
  /** The upstream instances, origins only (e.g. `http://127.0.0.1:8090`), balanced by weight. */
  readonly upstreams: readonly UpstreamInstance[];
  readonly requestHeaders: HeaderEdits | undefined;
  readonly responseHeaders: HeaderEdits | undefined;
  /** Statuses after which an idempotent request is retried once on another instance. */
  readonly retryOn: readonly number[];
  /** Active health check of the instances; undefined: passive health only. */
  readonly healthCheck: HealthCheckConfig | undefined;
  /** The JWT the route requires (its own `auth:`, else the top-level one); undefined: none (docs/jwt.md). */
  readonly auth: JwtAuthConfig | undefined;
  /**
   * The route's own limits (absent in the file = one limit per tenant, named
   * after the route), then the global limits that apply to it: all decided together.
   */
  readonly limits: readonly LimitConfig[];
  /** The route's `kind: concurrency` limits: leases held while a request or tunnel is open; absent = none. */
  readonly concurrency?: readonly ConcurrencyLimitConfig[];
}

/** Asked with GET on each instance; a 2xx or 3xx keeps it in rotation. */
export type HealthCheckConfig = Out<typeof healthCheckSchema>;

/** Header name → value (`{tenant}`, `{route}`, `{clientIp}` filled per request), and names removed. */
export type HeaderEdits = Out<typeof headerEditsSchema>;

/** The store's options as the schema outputs them; its addresses parsed and its files read below. */
type StoreOptions = Pick<Out<typeof storeSchema>, 'url' | 'deadlineMs' | 'maxKeys' | 'wait' | 'username'>;

export interface StoreConfig extends StoreOptions {
  readonly type: 'memory' | 'redis';
  readonly cluster: readonly ListenAddress[] | undefined;
  /** The data nodes' password (passwordFile already read); also every Cluster node's. */
  readonly password: string | undefined;
  /** TLS to the data nodes; undefined = plain unless the URL is `rediss://`. */
  readonly tls: TlsFiles | undefined;
  readonly sentinel: SentinelConfig | undefined;
}

/** A TLS section with its files read: PEM text, never paths. */
export interface TlsFiles {
  readonly ca: string | undefined;
  readonly cert: string | undefined;
  readonly key: string | undefined;
  readonly servername: string | undefined;
  readonly rejectUnauthorized: boolean;
}

export interface SentinelConfig {
  /** The master's name as the sentinels know it. */
  readonly name: string;
  readonly sentinels: readonly ListenAddress[];
  /** The sentinels' own user, password and TLS. */
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: TlsFiles | undefined;
}

/** database.tls: libpq's sslmode (disable, require, verify-full) and the CA's PEM text. */
export interface DatabaseTls {
  readonly mode: NonNullable<Out<typeof databaseSchema>['tls']>['mode'];
  readonly ca: string | undefined;
}


export type { LogFormat, LogLevel } from './logger.js';

/** A schema's output as loaded: every field present (an absent optional one as undefined) and read-only. */
type Loaded<T> = { readonly [K in keyof Required<T>]: undefined extends T[K] ? T[K] | undefined : T[K] };
type Out<S extends z.ZodType> = Loaded<z.output<S>>;

export interface SluiceConfig {
  /** The file it came from, for messages. */
  readonly source: string;
  readonly listen: ListenAddress;
  /** HTTPS on the gateway listener (absent: plain HTTP), and the optional plain listener that redirects to it. */
  readonly tls: (TlsConfig & { readonly redirectHttp: ListenAddress | undefined }) | undefined;
  readonly admin: { readonly listen: ListenAddress; readonly token: string | undefined; readonly tls: TlsConfig | undefined; readonly metrics: MetricsAccess };
  readonly routes: readonly RouteConfig[];
  /** `header` lower-cased, as node exposes request headers; the keys hashed. */
  readonly tenants: Omit<Out<typeof tenantsSchema>, 'keys'> & { readonly keys: readonly TenantKey[] };
  readonly defaultRule: Rule;
  /** Seed data for the rule store. */
  readonly rules: readonly SeedRule[];
  readonly store: StoreConfig;
  /**
   * The resilience layer's options as the engine takes them, validated with the
   * rest of the file and defaults filled: the `resilience:` section plus
   * `store.deadlineMs`, `instances` and `region`.
   */
  readonly resilience: ResilienceConfig;
  /** The top-level `globalLimits:`, also appended to each route's `limits` they apply to. */
  readonly globalLimits: readonly LimitConfig[];
  /** The config file's allow and deny list entries (the rule store may hold more). */
  readonly lists: readonly ListEntry[];
  readonly clientIp: ClientIpConfig;
  readonly headers: Out<typeof headersSchema>;
  readonly limits: Out<typeof limitsSchema>;
  /** The rule store's options; its TLS CA and password files read. */
  readonly database: Omit<Out<typeof databaseSchema>, 'tls' | 'passwordFile'> & {
    /** undefined = as database.url says (its sslmode, if any). */
    readonly tls: DatabaseTls | undefined;
    /** From database.passwordFile, read at start and on reload; replaces the URL's password. */
    readonly password: string | undefined;
  };
  readonly decisionService: DecisionServiceConfig;
  /** Gateway processes on this machine (`auto` resolved to the available cores); 1 = a single process, no primary. */
  readonly workers: number;
  /** SLUICE_INSTANCES: a fixed instance count for the fallback; undefined = count live instances in Redis. */
  readonly instances: number | undefined;
  readonly region: string | undefined;
  readonly dataDir: string;
  /** `format` undefined: pretty when stdout is a terminal, else JSON (logger.ts). */
  readonly log: Out<typeof logSchema>;
  /** The `tracing:` section as the file has it (defaults filled); the OTEL_* variables are applied at start (tracing/settings.ts). */
  readonly tracing: TracingFileConfig;
  /** Limits' `notify:` by limit id (secrets read) and the sender's options (notify/config.ts). */
  readonly notifications: NotificationsConfig;
}

/** admin.metrics: /metrics on its own listener (undefined: on the admin listener), and whether it needs a read token. */
export interface MetricsAccess {
  readonly listen: ListenAddress | undefined;
  readonly requireToken: boolean;
}
