// The loaded configuration: typed, defaults filled, keys hashed, frozen.
import type { JwtAuthConfig } from '../auth/jwt-config.js';
import type { Rule } from '../core/rule.js';
import type { ResilienceConfig } from '../limiter/resilience-config.js';
import type { ClientIpConfig, ConcurrencyLimitConfig, LimitConfig } from '../limits/types.js';
import type { ListEntry } from '../lists/types.js';
import type { SeedRule, TenantKey } from '../rules/types.js';
import type { DecisionServiceConfig } from './decision-service.js';
import type { ListenAddress } from './listen-address.js';
import type { UpstreamInstance } from './route-forwarding.js';
import type { TlsConfig } from './tls.js';

export type { SeedRule, TenantKey } from '../rules/types.js';
export type { DecisionServiceConfig } from './decision-service.js';
export type { ListenAddress } from './listen-address.js';

export interface RouteConfig {
  readonly id: string;
  /** Upper-case methods; undefined means any method. */
  readonly methods: readonly string[] | undefined;
  /** `/orders`, `/orders/:id` or prefix `/api/*`. */
  readonly path: string;
  /** The upstream instances, origins only (e.g. `http://127.0.0.1:8090`), balanced by weight. */
  readonly upstreams: readonly UpstreamInstance[];
  /** Only requests whose Host is this (`*.example.com`: any subdomain); undefined: any host. */
  readonly host: string | undefined;
  /** Forward a `/prefix/*` route's requests without the prefix. */
  readonly stripPrefix: boolean;
  /** Match the path lower-cased (an upstream that ignores case); false: the upstream must be case-sensitive. */
  readonly caseInsensitive: boolean;
  readonly rewrite: { readonly pattern: string; readonly replacement: string } | undefined;
  readonly requestHeaders: HeaderEdits | undefined;
  readonly responseHeaders: HeaderEdits | undefined;
  /** Statuses after which an idempotent request is retried once on another instance. */
  readonly retryOn: readonly number[];
  /** Active health check of the instances; undefined: passive health only. */
  readonly healthCheck: HealthCheckConfig | undefined;
  /** Budget for the upstream's response headers, and for each idle gap in its body. */
  readonly timeoutMs: number;
  /** No API key needed: the route's limits are keyed by ip, header or route. */
  readonly anonymous: boolean;
  /** Units one request takes from each of the route's limits. */
  readonly cost: number;
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

export interface HealthCheckConfig {
  /** Asked with GET on each instance; a 2xx or 3xx keeps it in rotation. */
  readonly path: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

export interface HeaderEdits {
  /** Header name → value; `{tenant}`, `{route}`, `{clientIp}` are filled per request. */
  readonly set: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

export interface StoreConfig {
  readonly type: 'memory' | 'redis';
  readonly url: string | undefined;
  readonly cluster: readonly ListenAddress[] | undefined;
  readonly deadlineMs: number | undefined;
  readonly maxKeys: number | undefined;
  /** The data nodes' ACL user and password (passwordFile already read); also every Cluster node's. */
  readonly username: string | undefined;
  readonly password: string | undefined;
  /** TLS to the data nodes; undefined = plain unless the URL is `rediss://`. */
  readonly tls: TlsFiles | undefined;
  readonly sentinel: SentinelConfig | undefined;
  /** Opt-in WAIT after each admission (standalone and Sentinel; not a Cluster). */
  readonly wait: { readonly replicas: number; readonly timeoutMs: number } | undefined;
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
  readonly mode: 'disable' | 'require' | 'verify-full';
  readonly ca: string | undefined;
}


export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface SluiceConfig {
  /** The file it came from, for messages. */
  readonly source: string;
  readonly listen: ListenAddress;
  /** HTTPS on the gateway listener (absent: plain HTTP), and the optional plain listener that redirects to it. */
  readonly tls: (TlsConfig & { readonly redirectHttp: ListenAddress | undefined }) | undefined;
  readonly admin: { readonly listen: ListenAddress; readonly token: string | undefined; readonly tls: TlsConfig | undefined };
  readonly routes: readonly RouteConfig[];
  readonly tenants: {
    /** Lower-cased, as node exposes request headers. */
    readonly header: string;
    readonly unknownKeys: 'reject' | 'default-rule';
    readonly keys: readonly TenantKey[];
  };
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
  readonly headers: { readonly ietf: boolean; readonly problemJson: boolean };
  readonly limits: {
    readonly maxHeaderBytes: number;
    readonly maxBodyBytes: number;
    readonly maxQueued: number;
    readonly headerTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly bodyIdleTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    /** A WebSocket tunnel idle both ways this long is closed. */
    readonly websocketIdleTimeoutMs: number;
    readonly bufferBodyBytes: number;
    readonly http2MaxConcurrentStreams: number;
    readonly http2MaxResetsPerSecond: number;
  };
  readonly database: {
    readonly url: string | undefined;
    /** Rule-store reads and writes give up (503) after this; PostgreSQL's statement_timeout too. */
    readonly statementTimeoutMs: number;
    readonly connectTimeoutMs: number;
    /** How far PostgreSQL's clock may lag ours (the failed-write guarantee assumes it). */
    readonly maxClockSkewMs: number;
    /** /readyz's store probe timeout. */
    readonly healthTimeoutMs: number;
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
  readonly log: { readonly level: LogLevel };
}
