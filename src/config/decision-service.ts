// The decision service's part of the loaded config (`decisionService:`): its
// listeners, the envoyproxy/ratelimit domains as a descriptor tree, and TLS on
// gRPC. The shapes live here, with the config that carries them; the decision
// service (src/decision-service/) parses the section and hands its parser to the loader
// (decision-service/load-config.ts), so config never imports the decision service.
import type { CalendarSpec } from '../core/calendar.js';
import type { Rule } from '../policies/rule.js';
import type { ConfigPath } from './config-error.js';
import type { ListenAddress } from './listen-address.js';

/** The reference's units (decision-service/envoy-schema.ts has their seconds). */
export type UnitName = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'year';

/** A wildcard value split at its `*`s (decision-service/wildcard.ts). */
export type WildcardParts = readonly string[];

export interface ConfiguredLimit {
  /** `rate_limit.name`: what `replaces` refers to. */
  readonly name: string | undefined;
  readonly unit: UnitName;
  readonly requestsPerUnit: number;
  /** `unlimited: true`: never limited, never counted. */
  readonly unlimited: boolean;
  /** `requests_per_unit: 0`: every request refused (OVER_LIMIT), nothing counted. */
  readonly blocked: boolean;
  /** `shadow_mode: true`: decided and counted, answered OK. */
  readonly shadow: boolean;
  /** `quota_mode: true`: over the limit refuses the request only when every quota descriptor of it is over. */
  readonly quotaMode: boolean;
  /** Names of the limits this one replaces when both match a request. */
  readonly replaces: readonly string[];
  /** The Sluice rules the descriptor is decided by (the fixed window, or `sluice:`); none when blocked or unlimited. */
  readonly rules: readonly Rule[];
  /** Names the limit in the IETF headers: a valid id. */
  readonly headerId: string;
  /** detailed_metric: the statistics key is the request's own entries. */
  readonly detailedMetric: boolean;
  /** With decisionService.calendarUnits, a MONTH or YEAR limit's calendar: where a blocked limit's unit ends. */
  readonly calendar?: CalendarSpec;
}

export interface DescriptorNode {
  readonly limit: ConfiguredLimit | undefined;
  readonly children: DescriptorLevel;
  /** Its part of the reference's statistics key: `key` or `key_value` as configured. */
  readonly statSegment: string;
  /** value_to_metric: the statistics key holds the request's value instead. */
  readonly valueToMetric: boolean;
}

export interface WildcardNode {
  readonly key: string;
  /** The configured value, e.g. `files/*`. */
  readonly value: string;
  readonly parts: WildcardParts;
  /** `share_threshold: true`: every value matching shares one bucket. */
  readonly shared: boolean;
  readonly node: DescriptorNode;
}

export interface DescriptorLevel {
  /** `key\0value` → node. */
  readonly exact: Map<string, DescriptorNode>;
  /** Nodes whose value holds a `*`, in file order. */
  readonly wildcards: WildcardNode[];
  /** Key-only nodes: any value. */
  readonly keyOnly: Map<string, DescriptorNode>;
}

/** domain → its top level. */
export type Domains = ReadonlyMap<string, DescriptorLevel>;

export interface GrpcTls {
  /** PEM text, not paths. */
  readonly cert: string;
  readonly key: string;
  readonly clientCa: string | undefined;
  readonly clientSan: string | undefined;
  /** The files it was read from and how to read them again: watched, and re-read when one changes (cert rotation). */
  readonly reload?: { readonly files: readonly string[]; read(): GrpcTls };
}

export type ForwardAuthProxy = 'nginx' | 'caddy' | 'traefik' | 'apisix';

export interface GrpcRequestLimits {
  readonly maxMessageBytes: number;
  readonly maxDescriptors: number;
  readonly maxEntries: number;
}

export const DEFAULT_GRPC_LIMITS: GrpcRequestLimits = Object.freeze({ maxMessageBytes: 65_536, maxDescriptors: 64, maxEntries: 32 });

export interface DecisionServiceConfig {
  /** Envoy's RateLimitService over gRPC; undefined = off. */
  readonly grpcListen: ListenAddress | undefined;
  /** `/json` and forward-auth `/decide` over HTTP; undefined = off. */
  readonly httpListen: ListenAddress | undefined;
  /** envoyproxy/ratelimit config files (or directories), resolved against the config file's folder. */
  readonly envoyConfig: readonly string[];
  /** Their domains, loaded and checked with the config. */
  readonly domains: Domains;
  /** What /decide answers a refused request with (429; 403 for nginx's auth_request). */
  readonly refusedStatus: number;
  /** /decide for a request no route matches: deny (404) or allow (200, unlimited). */
  readonly noRoute: 'deny' | 'allow';
  /** Bounds on one gRPC call: its message (refused before decoding), its descriptors, each descriptor's entries. */
  readonly grpcLimits: GrpcRequestLimits;
  /** The proxy asking /decide: its headers (and only its) carry the original method, URI and host. */
  readonly forwardAuthProxy: ForwardAuthProxy;
  /** Files naming one domain add to it (MERGE_DOMAIN_CONFIG) instead of being refused. */
  readonly mergeDomains: boolean;
  /** TLS (and mutual TLS) on the gRPC listener, PEM text; undefined = plaintext. Set by `sluice ratelimit` (GRPC_SERVER_USE_TLS…). */
  readonly grpcTls: GrpcTls | undefined;
  /** Serve gRPC on this unix socket instead of grpcListen's TCP port (the reference's GRPC_UDS). */
  readonly grpcUnixSocket: string | undefined;
  /** A gRPC connection is sent GOAWAY after this long, and cut `graceMs` later (GRPC_MAX_CONNECTION_AGE/_GRACE); undefined = never. */
  readonly grpcConnectionAge: { readonly maxAgeMs: number; readonly graceMs: number } | undefined;
  /** Every request answered OK, its limits still decided and reported (the reference's SHADOW_MODE). */
  readonly shadowMode: boolean;
  /** One line per envoyConfig file with reference keys out of place: loaded and ignored, as the reference does. */
  readonly warnings: readonly string[];
}

/**
 * The loader's own parser when no decision service is handed in: the section
 * must be absent, and the decision service is off (as its parser reads an
 * absent section).
 */
export function noDecisionService(fail: (path: ConfigPath, message: string) => never) {
  return (file: { readonly decisionService?: unknown }): DecisionServiceConfig => {
    if (file.decisionService !== undefined) return fail(['decisionService'], 'needs the decision service: load the config with decision-service/load-config.ts');
    return {
      grpcListen: undefined,
      httpListen: undefined,
      envoyConfig: [],
      domains: new Map(),
      mergeDomains: false,
      shadowMode: false,
      grpcTls: undefined,
      grpcUnixSocket: undefined,
      grpcConnectionAge: undefined,
      warnings: [],
      refusedStatus: 429,
      noRoute: 'deny',
      forwardAuthProxy: 'nginx',
      grpcLimits: DEFAULT_GRPC_LIMITS,
    };
  };
}
