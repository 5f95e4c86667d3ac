// The shape of sluice.yaml after `${VAR}` expansion. Rules are checked apart, with
// `parseRule`, so a rule error reads the same here as in the admin API or the CLI.
import { z } from 'zod';
import { jwtAuthSchema, routeAuthSchema } from '../auth/jwt-schema.js';
import { isTimeZone } from '../core/calendar.js';
import { isValidId } from '../core/ids.js';
import { checkResilience, resilienceFieldsSchema } from '../limiter/resilience-config.js';
import { CLIENT_IP_DEFAULTS, clientIpSchema } from '../limits/client-ip-schema.js';
import { listEntrySchema } from '../lists/config-schema.js';
import { globalLimitsSchema, routeLimitFields } from '../limits/config-schema.js';
import { isReservedTenant, RESERVED_TENANT_MESSAGE } from '../rules/anonymous-tenant.js';
import { databaseConnectionFields, hostPort, storeConnectionFields } from './connection-schema.js';
import { routeForwardingFields } from './route-forwarding.js';
import { tlsFields, tlsSchema } from './tls.js';

const ID_MESSAGE = 'must be an id: 1-64 letters, digits or . _ ~ @ + -';
export const idSchema = z.string().refine(isValidId, ID_MESSAGE);
const idOrAny = z.string().refine((value) => value === '*' || isValidId(value), `${ID_MESSAGE}, or *`);
// Tenants of unknown keys live under a reserved prefix that named tenants may not use.
const tenantSchema = idSchema.refine((value) => !isReservedTenant(value), RESERVED_TENANT_MESSAGE);
const tenantOrAny = idOrAny.refine((value) => !isReservedTenant(value), RESERVED_TENANT_MESSAGE);

const LISTEN_PATTERN = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/;
// A bare port may be a YAML number (`listen: 8080`, or `${PORT:-8080}`, which expands to one).
export const listenSchema = z.preprocess(
  (value) => (typeof value === 'number' && Number.isInteger(value) && value >= 0 ? String(value) : value),
  z
    .string('must be host:port or a port, e.g. 127.0.0.1:8080')
    .regex(LISTEN_PATTERN, 'must be host:port, e.g. 127.0.0.1:8080')
    .refine((value) => Number(LISTEN_PATTERN.exec(value)?.[2]) <= 65535, 'port must be at most 65535'),
);

const redisUrl = z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL');
const positiveInt = (max: number) => z.number().int('must be an integer').min(1, 'must be at least 1').max(max, `must be at most ${max}`);

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
/** `/orders`, `/orders/:id`, a prefix `/api/*`, or `/*` (every path). */
const PATH_PATTERN = /^\/\*$|^\/(?:[A-Za-z0-9._~!$&'()+,;=@%-]+|:[A-Za-z_][A-Za-z0-9_]*)?(?:\/(?:[A-Za-z0-9._~!$&'()+,;=@%-]+|:[A-Za-z_][A-Za-z0-9_]*))*(?:\/\*)?$/;

export const routeSchema = z
  .object({
    id: idSchema,
    methods: z.array(z.enum(METHODS, `must be one of ${METHODS.join(', ')}`)).min(1, 'must list at least one method').optional(),
    path: z.string().regex(PATH_PATTERN, 'must be a path such as /orders, /orders/:id, /api/* or /*'),
    ...routeForwardingFields,
    timeoutMs: positiveInt(600_000).default(30_000),
    ...routeLimitFields,
    auth: routeAuthSchema,
  })
  .strict();

const keySchema = z
  .object({
    key: z.string().min(8, 'must be at least 8 characters').max(512, 'must be at most 512 characters'),
    tenant: tenantSchema,
  })
  .strict();

const tenantsSchema = z
  .object({
    header: z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name').default('X-Api-Key'),
    unknownKeys: z.enum(['reject', 'default-rule'], 'must be reject or default-rule').default('reject'),
    keys: z.array(keySchema).default([]),
  })
  .strict();

/** A seed rule: who and where, the rule's own fields beside (checked by parseRule). */
const ruleEntrySchema = z.object({ tenant: tenantOrAny, route: idOrAny }).catchall(z.unknown());

const storeSchema = z
  .object({
    type: z.enum(['memory', 'redis'], 'must be memory or redis').optional(),
    url: redisUrl.optional(),
    cluster: z.array(hostPort).min(1, 'must list at least one node').optional(),
    /** Budget of one Redis call, ms (default 5): how long its connection may stay silent before the fallback decides. */
    deadlineMs: z.number().positive('must be positive').max(10_000, 'must be at most 10000').optional(),
    /** Memory store: most buckets kept, least recently used evicted first. */
    maxKeys: positiveInt(100_000_000).optional(),
    /** Opt-in WAIT after each admission: `replicas` must acknowledge its write within `timeoutMs` (below deadlineMs). */
    wait: z.object({ replicas: positiveInt(100), timeoutMs: positiveInt(10_000) }).strict().optional(),
    ...storeConnectionFields,
  })
  .strict();

/** How long a client may take over its request; seconds, not nginx's minutes, so slow clients cannot pile up. */
const LISTENER_DEFAULTS = {
  headerTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  bodyIdleTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  websocketIdleTimeoutMs: 300_000,
  bufferBodyBytes: 65_536,
  http2MaxConcurrentStreams: 128,
  http2MaxResetsPerSecond: 200,
};
const LISTENER_LIMITS = {
  /** From the first byte of a request (or the connection's opening) to the end of its headers. */
  headerTimeoutMs: positiveInt(600_000).default(LISTENER_DEFAULTS.headerTimeoutMs),
  /** The whole request, headers and body, as received from the client. */
  requestTimeoutMs: positiveInt(3_600_000).default(LISTENER_DEFAULTS.requestTimeoutMs),
  /** Longest silence inside a request body. */
  bodyIdleTimeoutMs: positiveInt(600_000).default(LISTENER_DEFAULTS.bodyIdleTimeoutMs),
  /** How long an idle keep-alive connection is kept (announced to clients in `Keep-Alive: timeout=`). */
  keepAliveTimeoutMs: positiveInt(600_000).default(LISTENER_DEFAULTS.keepAliveTimeoutMs),
  /** A WebSocket tunnel with no byte either way for this long is closed. */
  websocketIdleTimeoutMs: positiveInt(86_400_000).default(LISTENER_DEFAULTS.websocketIdleTimeoutMs),
  /** SETTINGS_MAX_CONCURRENT_STREAMS: streams one HTTP/2 connection may have open at once (nginx's default, 128). */
  http2MaxConcurrentStreams: positiveInt(10_000).default(LISTENER_DEFAULTS.http2MaxConcurrentStreams),
  /** Streams one HTTP/2 connection may reset in a second before it gets GOAWAY and is closed (rapid reset). */
  http2MaxResetsPerSecond: positiveInt(100_000).default(LISTENER_DEFAULTS.http2MaxResetsPerSecond),
  /** Bodies up to this size are read whole before an upstream connection is taken. */
  bufferBodyBytes: z.number().int('must be an integer').min(0, 'must be at least 0').max(16_777_216, 'must be at most 16777216').default(LISTENER_DEFAULTS.bufferBodyBytes),
};

/**
 * The resilience layer's options (breaker, fallback, hot keys, regions), with
 * the engine's defaults filled; `instances` and `region` are top-level and the
 * deadline is `store.deadlineMs`. Their checks across fields run on the whole
 * file (below), so they name the fields where the file has them.
 */
const resilienceSchema = resilienceFieldsSchema.omit({ instances: true, region: true, deadlineMs: true, replicaWait: true });

export const configFileSchema = z
  .object({
    listen: listenSchema.optional(),
    /** HTTPS on the gateway listener; `redirectHttp`: a plain-HTTP listener answering every request with a redirect to it. */
    tls: z.object({ ...tlsFields, redirectHttp: listenSchema.optional() }).strict().optional(),
    admin: z.object({ listen: listenSchema.optional(), token: z.string().min(16, 'must be at least 16 characters').optional(), tls: tlsSchema.omit({ http2: true }).optional() }).strict().optional(),
    /** Every route requires a JWT unless it says `auth: none` (docs/jwt.md). */
    auth: jwtAuthSchema.optional(),
    routes: z.array(routeSchema).min(1, 'must list at least one route: a gateway with no routes serves nothing'),
    tenants: tenantsSchema.default({ header: 'X-Api-Key', unknownKeys: 'reject', keys: [] }),
    defaultRule: z.unknown().optional(),
    rules: z.array(ruleEntrySchema).default([]),
    store: storeSchema.default({}),
    resilience: resilienceSchema.prefault({}),
    /** Limits every route enforces besides its own (a ceiling over the upstream, a per-IP limit over the whole API). */
    globalLimits: globalLimitsSchema,
    /** Allow and deny list entries (docs/lists.md): exempt or refuse addresses, networks, tenants, header or claim values. */
    lists: z.array(listEntrySchema).default([]),
    /** Where the client IP of `key: ip` limits comes from. */
    clientIp: clientIpSchema.default(CLIENT_IP_DEFAULTS),
    headers: z.object({ ietf: z.boolean().default(false), problemJson: z.boolean().default(false) }).strict().default({ ietf: false, problemJson: false }),
    limits: z
      .object({
        maxHeaderBytes: positiveInt(1_048_576).default(16_384),
        maxBodyBytes: positiveInt(Number.MAX_SAFE_INTEGER).default(10 * 1024 * 1024),
        /** Shaping: requests held at once in this process before new ones are refused. */
        maxQueued: positiveInt(1_000_000).default(1_000),
        ...LISTENER_LIMITS,
      })
      .strict()
      .default({ maxHeaderBytes: 16_384, maxBodyBytes: 10 * 1024 * 1024, maxQueued: 1_000, ...LISTENER_DEFAULTS }),
    database: z
      .object({
        url: z.string().regex(/^postgres(?:ql)?:\/\/\S+$/, 'must be a postgres:// URL').optional(),
        /** Longest a rule-store read or write may take before the admin API answers 503. */
        statementTimeoutMs: positiveInt(60_000).default(3_000),
        /** Longest to wait for a new PostgreSQL connection. */
        connectTimeoutMs: positiveInt(60_000).default(3_000),
        /** How far PostgreSQL's clock may lag the gateway's; a failed write's answer waits this long past its deadline. */
        maxClockSkewMs: z.number().int('must be an integer').min(0, 'must be at least 0').max(60_000, 'must be at most 60000').default(500),
        /** The /readyz probe's own timeout. */
        healthTimeoutMs: positiveInt(60_000).default(2_000),
        ...databaseConnectionFields,
      })
      .strict()
      .prefault({}),
    /** The decision service for proxies (docs/decision-service.md): Envoy RLS over gRPC, /json and forward-auth. */
    decisionService: z
      .object({
        grpcListen: listenSchema.optional(),
        httpListen: listenSchema.optional(),
        envoyConfig: z.union([z.string().min(1, 'must not be empty'), z.array(z.string().min(1, 'must not be empty')).min(1, 'must list at least one path')]).optional(),
        refusedStatus: z.number().int('must be an integer').min(400, 'must be a 4xx status').max(499, 'must be a 4xx status').default(429),
        noRoute: z.enum(['deny', 'allow'], 'must be deny or allow').default('deny'),
        /** The proxy in front of /decide: it says which headers carry the original request (the ones that proxy sets and overwrites). */
        forwardAuthProxy: z.enum(['nginx', 'caddy', 'traefik', 'apisix'], 'must be nginx, caddy, traefik or apisix').default('nginx'),
        /** envoyproxy/ratelimit's MERGE_DOMAIN_CONFIG: files naming one domain are merged. */
        mergeDomains: z.boolean().default(false),
        /** Bounds on one gRPC ShouldRateLimit call (Envoy sends a handful of descriptors): larger ones are refused before they are decided. */
        grpcMaxMessageBytes: positiveInt(4 * 1024 * 1024).default(65_536),
        maxDescriptors: positiveInt(10_000).default(64),
        maxDescriptorEntries: positiveInt(1_000).default(32),
        /** envoyproxy/ratelimit's SHADOW_MODE: every request answered OK, its limits decided and reported. */
        shadowMode: z.boolean().default(false),
        /** MONTH and YEAR follow the calendar (true: of UTC; or of {timeZone}) instead of the reference's 30 and 365 days (the default). */
        calendarUnits: z
          .union([
            z.boolean(),
            z.object({ timeZone: z.string().refine(isTimeZone, 'unknown time zone: expected an IANA name such as Europe/Paris or UTC') }).strict(),
          ])
          .optional(),
      })
      .strict()
      .optional(),
    /** Gateway processes on this machine: a count, or `auto` for one per available core. */
    workers: z.union([positiveInt(1024), z.literal('auto')], 'must be a whole number from 1 to 1024, or auto').optional(),
    instances: positiveInt(10_000).optional(),
    region: idSchema.optional(),
    dataDir: z.string().min(1).optional(),
    log: z.object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') }).strict().optional(),
  })
  .strict()
  .superRefine((file, ctx) =>
    checkResilience({ ...file.resilience, region: file.region }, ctx, { memberTtlMs: ['resilience', 'memberTtlMs'], rebalance: ['resilience', 'rebalance'] }),
  );

export type ConfigFile = z.infer<typeof configFileSchema>;
