// The shape of sluice.yaml after `${VAR}` expansion. Rules are checked apart, with
// `parseRule`, so a rule error reads the same here as in the admin API or the CLI.
import { z } from 'zod';
import { jwtAuthSchema, routeAuthSchema } from '../auth/jwt-schema.js';
import { isTimeZone } from '../core/calendar.js';
import { isValidId } from '../core/ids.js';
import { checkResilience, resilienceFieldsSchema } from '../limiter/engine/resilience-config.js';
import { CLIENT_IP_DEFAULTS, clientIpSchema } from '../request-limits/client-ip-schema.js';
import { listEntrySchema } from '../lists/config-schema.js';
import { globalLimitsSchema, routeLimitFields } from '../request-limits/config-schema.js';
import { isReservedTenant, RESERVED_TENANT_MESSAGE } from '../rules/anonymous-tenant.js';
import { databaseConnectionFields, hostPort, storeConnectionFields } from './connection-schema.js';
import { routeForwardingFields } from './route-forwarding.js';
import { tlsFields, tlsSchema } from './tls.js';
import { TRACING_DEFAULTS, tracingSchema } from './tracing-schema.js';
import { withFieldMeta } from './option-meta.js';
import { notificationsSchema } from '../notify/schema.js';

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
    id: idSchema.meta({ description: "the route's id: rules and bucket keys name it" }),
    methods: z
      .array(z.enum(METHODS, `must be one of ${METHODS.join(', ')}`))
      .min(1, 'must list at least one method')
      .optional()
      .meta({ description: 'the methods the route answers', defaultText: 'any method' }),
    path: z.string().regex(PATH_PATTERN, 'must be a path such as /orders, /orders/:id, /api/* or /*').meta({
      description: '`/orders` (exact), `/orders/:id` (one segment per parameter), `/api/*` (the prefix and anything under it) or `/*` (every path: a catch-all, listed last)',
    }),
    ...routeForwardingFields,
    timeoutMs: positiveInt(600_000)
      .default(30_000)
      .meta({ description: "budget for the upstream's response headers, and for each idle gap in its body; a late upstream → `504`" }),
    ...routeLimitFields,
    auth: routeAuthSchema,
  })
  .strict();

const keySchema = z
  .object({
    key: z.string().min(8, 'must be at least 8 characters').max(512, 'must be at most 512 characters').meta({ description: 'an API key, hashed (SHA-256) at load and never kept or logged' }),
    tenant: tenantSchema.meta({ description: 'the tenant the key names (not starting with `~`)' }),
  })
  .strict();

export const tenantsSchema = z
  .object({
    header: z.string().regex(/^[A-Za-z0-9-]+$/, 'must be a header name').default('X-Api-Key').meta({ description: 'the request header holding the API key; missing or empty → `401`' }),
    unknownKeys: z.enum(['reject', 'default-rule'], 'must be reject or default-rule').default('reject').meta({
      description:
        '`reject`: a key that is not an active key (in the rule store or in `tenants.keys`) gets `401 unknown_api_key`; `default-rule`: such a key is served as a tenant of its own ([configuration.md](configuration.md#tenants-and-api-keys))',
    }),
    keys: z.array(keySchema).default([]).meta({ description: '`{key, tenant}` pairs; keys created through the admin API are looked up first' }),
  })
  .strict();

/** A seed rule: who and where, the rule's own fields beside (checked by parseRule). */
const ruleEntrySchema = z
  .object({
    tenant: tenantOrAny.meta({ description: 'the tenant, or `*` for every tenant' }),
    route: idOrAny.meta({ description: 'a route of `routes`, or `*` for every route' }),
  })
  .catchall(z.unknown());

export const storeSchema = z
  .object({
    type: z.enum(['memory', 'redis'], 'must be memory or redis').optional().meta({
      description: '`memory`: buckets in this process (one instance only); `redis`: shared by every instance',
      defaultText: '`redis` when `url`, `cluster` or `sentinel` is set, else `memory`',
    }),
    url: redisUrl.optional().meta({
      description: 'Redis standalone, `redis://` or `rediss://`',
      env: 'SLUICE_REDIS_URL',
      envNote: "switches the store to Redis (the file's `store.cluster` and `store.sentinel` are dropped)",
    }),
    cluster: z.array(hostPort).min(1, 'must list at least one node').optional().meta({
      description: '`host:port` seed nodes of a Redis Cluster (give one of `url`, `cluster`, `sentinel`)',
      env: 'SLUICE_REDIS_CLUSTER',
      envNote: "comma-separated; switches the store to Redis (the file's `store.url` and `store.sentinel` are dropped)",
    }),
    /** Budget of one Redis call, ms (default 5): how long its connection may stay silent before the fallback decides. */
    deadlineMs: z.number().positive('must be positive').max(10_000, 'must be at most 10000').optional().meta({
      description:
        'budget of one Redis call, ms: how long its connection may stay silent before the fallback decides. Unset: twice the longest silence Redis kept an answered call waiting in the last 30 s, at least 5 and at most 50 ms ([resilience.md](resilience.md#the-default-deadline-adapts-to-the-distance)); set: fixed',
      defaultText: 'adaptive, 5 to 50 ms',
    }),
    /** Memory store: most buckets kept, least recently used evicted first. */
    maxKeys: positiveInt(100_000_000).optional().meta({ description: 'memory store only: most buckets kept; expired, then least recently used, are evicted first', defaultText: '`100000`' }),
    /** Opt-in WAIT after each admission: `replicas` must acknowledge its write within `timeoutMs` (below deadlineMs). */
    wait: z
      .object({
        replicas: positiveInt(100).meta({ description: "replicas that must acknowledge an admission's write (`WAIT`)", env: 'SLUICE_REDIS_WAIT_REPLICAS' }),
        timeoutMs: positiveInt(10_000).meta({ description: 'how long the `WAIT` waits for them, ms (below `store.deadlineMs`)', env: 'SLUICE_REDIS_WAIT_TIMEOUT_MS' }),
      })
      .strict()
      .optional()
      .meta({
        description:
          'opt-in `WAIT`: an admission decided in Redis is returned only once `replicas` acknowledged its write, or `timeoutMs` passed; fewer: the admission stands and `sluice_redis_wait_unreplicated_total` rises. Standalone and Sentinel, not a Cluster ([resilience.md](resilience.md#opt-in-wait))',
        defaultText: 'off',
      }),
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
  http2ResetCooldownMs: 10_000,
};
const restart = { reload: false } as const;
const LISTENER_LIMITS = {
  /** From the first byte of a request (or the connection's opening) to the end of its headers. */
  headerTimeoutMs: positiveInt(600_000)
    .default(LISTENER_DEFAULTS.headerTimeoutMs)
    .meta({
      description: "from a connection's opening (or a request's first byte) to the end of its headers; a client that sends nothing, or drips its headers, gets `408` and is disconnected; at most `requestTimeoutMs`",
      ...restart,
    }),
  /** The whole request, headers and body, as received from the client. */
  requestTimeoutMs: positiveInt(3_600_000)
    .default(LISTENER_DEFAULTS.requestTimeoutMs)
    .meta({ description: 'the whole request (headers and body) as received from the client; `408` past it. Raise it if clients upload large bodies over slow links', ...restart }),
  /** Longest silence inside a request body. */
  bodyIdleTimeoutMs: positiveInt(600_000)
    .default(LISTENER_DEFAULTS.bodyIdleTimeoutMs)
    .meta({ description: 'the longest silence allowed inside a request body; `408` and the connection closed past it' }),
  /** How long an idle keep-alive connection is kept (announced to clients in `Keep-Alive: timeout=`). */
  keepAliveTimeoutMs: positiveInt(600_000)
    .default(LISTENER_DEFAULTS.keepAliveTimeoutMs)
    .meta({
      description: 'how long an idle keep-alive connection is kept: announced to clients as `Keep-Alive: timeout=N` (whole seconds, rounded down); the gateway closes it about one second after that, so a client reusing it at the announced limit never races the close',
      ...restart,
    }),
  /** A WebSocket tunnel with no byte either way for this long is closed. */
  websocketIdleTimeoutMs: positiveInt(86_400_000)
    .default(LISTENER_DEFAULTS.websocketIdleTimeoutMs)
    .meta({ description: 'a WebSocket tunnel with no byte either way for this long is closed' }),
  /** SETTINGS_MAX_CONCURRENT_STREAMS: streams one HTTP/2 connection may have open at once (nginx's default, 128). */
  http2MaxConcurrentStreams: positiveInt(10_000)
    .default(LISTENER_DEFAULTS.http2MaxConcurrentStreams)
    .meta({
      description: "with `tls.http2`: the `SETTINGS_MAX_CONCURRENT_STREAMS` announced to every client (nginx's default); a stream past it is refused by the HTTP/2 layer (`REFUSED_STREAM`)",
      ...restart,
    }),
  /** Streams one HTTP/2 connection may reset in a second before it gets GOAWAY and is closed (rapid reset). */
  http2MaxResetsPerSecond: positiveInt(100_000)
    .default(LISTENER_DEFAULTS.http2MaxResetsPerSecond)
    .meta({
      description: 'with `tls.http2`: streams one connection may reset (or have reset) within one second; past it the connection gets `GOAWAY ENHANCE_YOUR_CALM` and is closed, and its requests not yet started are refused (rapid reset, CVE-2023-44487; [operations.md](operations.md#http2-limits)). Counted in one-second windows, so a burst across an edge may reach twice the value',
      ...restart,
    }),
  /** After a cut for resets, the address's new connections are closed at accept for this long. */
  http2ResetCooldownMs: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(3_600_000, 'must be at most 3600000')
    .default(LISTENER_DEFAULTS.http2ResetCooldownMs)
    .meta({
      description:
        "with `tls.http2`: once a connection is cut for its reset rate, new connections from the same address are closed at accept, before any TLS handshake, for this long, so a rapid-reset attacker cannot simply reconnect; a `clientIp.trustedProxies` address is never refused. `0` turns it off (behind a balancer that hides client addresses) ([operations.md](operations.md#http2-limits))",
      ...restart,
    }),
  /** Bodies up to this size are read whole before an upstream connection is taken. */
  bufferBodyBytes: z
    .number()
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(16_777_216, 'must be at most 16777216')
    .default(LISTENER_DEFAULTS.bufferBodyBytes)
    .meta({
      description: "request bodies up to this size (capped at `maxBodyBytes`) are read completely *before* an upstream connection is taken, like nginx's `proxy_request_buffering`; larger ones stream and are cut with `408` after `bodyIdleTimeoutMs` of silence. `0` streams every body",
    }),
};

/** admin.metrics: where Prometheus reads /metrics and whether it needs a token. */
const metricsAccessSchema = z
  .object({
    listen: listenSchema.optional().describe('Serve /metrics on its own listener (host:port, plain HTTP) instead of the admin listener, which then answers 404 for it.'),
    requireToken: z.boolean().default(false).describe('/metrics needs an admin bearer token whose role may read (read, write or admin), wherever it is served.'),
  })
  .strict()
  .describe('Where /metrics is served and whether it needs a token (default: open on the admin listener).');

const decisionServiceSchema = z
  .object({
    grpcListen: listenSchema.optional().meta({ description: "Envoy's rate limit service (gRPC) and `grpc.health.v1`, `host:port`", defaultText: 'off', env: 'SLUICE_GRPC_LISTEN', ...restart }),
    httpListen: listenSchema
      .optional()
      .meta({ description: "the decision service's HTTP listener: forward-auth `/decide`, `POST /json`, `GET /healthcheck`", defaultText: 'off', env: 'SLUICE_DECISION_LISTEN', ...restart }),
    envoyConfig: z
      .union([z.string().min(1, 'must not be empty'), z.array(z.string().min(1, 'must not be empty')).min(1, 'must list at least one path')])
      .optional()
      .meta({
        description: "envoyproxy/ratelimit config files: a path, a list of paths, or a directory of `.yaml`/`.yml` files, relative to this file's folder; checked at load with their own file:line errors, read again at each reload",
        env: 'SLUICE_ENVOY_CONFIG',
        envNote: 'comma-separated',
      }),
    refusedStatus: z
      .number()
      .int('must be an integer')
      .min(400, 'must be a 4xx status')
      .max(499, 'must be a 4xx status')
      .default(429)
      .meta({ description: "what `/decide` answers a refused request with (`403` for nginx's `auth_request`)" }),
    noRoute: z.enum(['deny', 'allow'], 'must be deny or allow').default('deny').meta({ description: '`/decide` for a request no route matches: `deny` (`404`) or `allow` (`200`, unlimited)' }),
    /** The proxy in front of /decide: it says which headers carry the original request (the ones that proxy sets and overwrites). */
    forwardAuthProxy: z
      .enum(['nginx', 'caddy', 'traefik', 'apisix'], 'must be nginx, caddy, traefik or apisix')
      .default('nginx')
      .meta({
        description: 'the proxy asking `/decide`: `nginx` (original request from `X-Original-Method`/`-URI` and `Host`) or `caddy`, `traefik`, `apisix` (`X-Forwarded-Method`/`-Uri`/`-Host`); only that proxy\'s headers are read ([decision-service.md](decision-service.md#forward-auth-for-http-proxies))',
      }),
    /** envoyproxy/ratelimit's MERGE_DOMAIN_CONFIG: files naming one domain are merged. */
    mergeDomains: z.boolean().default(false).meta({ description: "envoyproxy/ratelimit's `MERGE_DOMAIN_CONFIG`: files naming one domain add their descriptors to it (a key in two files is still an error)" }),
    /** Bounds on one gRPC ShouldRateLimit call (Envoy sends a handful of descriptors): larger ones are refused before they are decided. */
    grpcMaxMessageBytes: positiveInt(4 * 1024 * 1024)
      .default(65_536)
      .meta({ description: 'largest gRPC `ShouldRateLimit` message; a larger one is `RESOURCE_EXHAUSTED` before it is decoded', ...restart }),
    maxDescriptors: positiveInt(10_000).default(64).meta({ description: 'descriptors in one gRPC call; more is `INVALID_ARGUMENT`', ...restart }),
    maxDescriptorEntries: positiveInt(1_000).default(32).meta({ description: 'entries in one descriptor of a gRPC call; more is `INVALID_ARGUMENT`', ...restart }),
    /** envoyproxy/ratelimit's SHADOW_MODE: every request answered OK, its limits decided and reported. */
    shadowMode: z.boolean().default(false).meta({ description: "envoyproxy/ratelimit's `SHADOW_MODE`: every gRPC and `/json` request answered `OK`, its descriptors still decided, counted and reported" }),
    /** MONTH and YEAR follow the calendar (true: of UTC; or of {timeZone}) instead of the reference's 30 and 365 days (the default). */
    calendarUnits: z
      .union([
        z.boolean(),
        z.object({ timeZone: z.string().refine(isTimeZone, 'unknown time zone: expected an IANA name such as Europe/Paris or UTC') }).strict(),
      ])
      .optional()
      .meta({
        description: "`MONTH` and `YEAR` units follow the calendar (`true`: of UTC; or `{ timeZone }`) instead of the reference's 30 and 365 days",
        defaultText: '`false`',
      }),
  })
  .strict()
  .optional()
  .meta({ description: 'the decision service for proxies: Envoy RLS over gRPC, `/json` and forward-auth ([decision-service.md](decision-service.md))' });

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export const LOG_FORMATS = ['pretty', 'json'] as const;

/**
 * The resilience layer's options (breaker, fallback, hot keys, regions), with
 * the engine's defaults filled; `instances` and `region` are top-level and the
 * deadline is `store.deadlineMs`. Their checks across fields run on the whole
 * file (below), so they name the fields where the file has them.
 */
const resilienceSchema = resilienceFieldsSchema.omit({ instances: true, region: true, deadlineMs: true, replicaWait: true });

export const headersSchema = z
  .object({
    ietf: z.boolean().default(false).meta({ description: 'also send `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-11)' }),
    problemJson: z.boolean().default(false).meta({ description: 'answer 429 with an RFC 9457 `application/problem+json` body instead of the small JSON body' }),
  })
  .strict();

export const limitsSchema = z
  .object({
    maxHeaderBytes: positiveInt(1_048_576).default(16_384).meta({ description: 'largest request header block; larger → `431`', ...restart }),
    maxBodyBytes: positiveInt(Number.MAX_SAFE_INTEGER)
      .default(10 * 1024 * 1024)
      .meta({ description: 'largest request body; a larger `Content-Length` → `413` before anything is read; a longer body without one is cut off at the limit and answered `413`' }),
    /** Shaping: requests held at once in this process before new ones are refused. */
    maxQueued: positiveInt(1_000_000).default(1_000).meta({ description: 'shaping: requests held at once in this process; past it new ones get `503`', ...restart }),
    ...LISTENER_LIMITS,
  })
  .strict();

export const databaseSchema = z
  .object({
    url: z
      .string()
      .regex(/^postgres(?:ql)?:\/\/\S+$/, 'must be a postgres:// URL')
      .optional()
      .meta({ description: 'PostgreSQL (`postgres://` or `postgresql://`) for rules and keys; without it, the embedded SQLite store in `dataDir`', env: 'SLUICE_DATABASE_URL' }),
    /** Longest a rule-store read or write may take before the admin API answers 503. */
    statementTimeoutMs: positiveInt(60_000)
      .default(3_000)
      .meta({ description: "longest a rule-store read or write may take before the admin API answers `503`; the rule cache's full reloads may take 10 × this; also PostgreSQL's `statement_timeout`" }),
    /** Longest to wait for a new PostgreSQL connection. */
    connectTimeoutMs: positiveInt(60_000).default(3_000).meta({ description: 'longest to wait for a new PostgreSQL connection' }),
    /** How far PostgreSQL's clock may lag the gateway's; a failed write's answer waits this long past its deadline. */
    maxClockSkewMs: z
      .number()
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(60_000, 'must be at most 60000')
      .default(500)
      .meta({
        description: "how far PostgreSQL's clock may lag the gateway's: a failed write is answered only this long after its deadline ([operations.md](operations.md#a-failed-write-never-lands-later))",
      }),
    /** The /readyz probe's own timeout. */
    healthTimeoutMs: positiveInt(60_000).default(2_000).meta({ description: "how long `/readyz` waits for the rule store's answer" }),
    ...databaseConnectionFields,
  })
  .strict();

export const logSchema = z
  .object({
    level: z.enum(LOG_LEVELS).default('info').meta({ description: 'the lowest level logged', env: 'SLUICE_LOG_LEVEL' }),
    format: z
      .enum(LOG_FORMATS, `must be one of ${LOG_FORMATS.join(', ')}`)
      .optional()
      .meta({
        description: '`pretty`: one human-readable line per entry; `json`: one JSON object per line, `"level":"info"` named ([operations.md](operations.md#logs)); `sluice start --log-format` sets it too',
        defaultText: '`pretty` when stdout is a terminal, else `json`',
        env: 'SLUICE_LOG_FORMAT',
      }),
  })
  .strict();

export const configFileSchema = z
  .object({
    listen: listenSchema.optional().meta({
      description: "the gateway's address, `host:port` (IPv6 as `[::1]:8080`); a bare port (`8080`, quoted or not, or a variable that expands to one) listens on 127.0.0.1",
      defaultText: '`127.0.0.1:8080`',
      env: 'SLUICE_LISTEN',
      ...restart,
    }),
    /** HTTPS on the gateway listener; `redirectHttp`: a plain-HTTP listener answering every request with a redirect to it. */
    tls: withFieldMeta(z.object({ ...tlsFields, redirectHttp: listenSchema.optional() }).strict(), {
      cert: { env: 'SLUICE_TLS_CERT' },
      key: { env: 'SLUICE_TLS_KEY' },
      redirectHttp: { description: 'a plain-HTTP listener answering every request with `308` to the same path on HTTPS', defaultText: 'off', ...restart },
    })
      .optional()
      .meta({
        description: 'HTTPS on the gateway listener ([configuration.md](configuration.md#https)); the files are read again at each reload, turning TLS on or off takes a restart',
        defaultText: 'off (plain HTTP)',
      }),
    admin: z
      .object({
        listen: listenSchema.optional().meta({ description: "the admin API's address", defaultText: '`127.0.0.1:8081`', env: 'SLUICE_ADMIN_LISTEN' }),
        token: z
          .string()
          .min(16, 'must be at least 16 characters')
          .optional()
          .meta({ description: 'bearer token of the admin API; without it only `/healthz`, `/readyz` and `/metrics` answer (everything else gets `403`)', env: 'SLUICE_ADMIN_TOKEN' }),
        tls: tlsSchema
          .omit({ http2: true })
          .optional()
          .meta({ description: 'HTTPS on the admin API (HTTP/1.1 only): the same fields as `tls`', defaultText: 'off' }),
        metrics: metricsAccessSchema.optional(),
      })
      .strict()
      .optional()
      .meta({ description: 'the admin API ([admin-api.md](admin-api.md))', ...restart }),
    /** Every route requires a JWT unless it says `auth: none` (docs/jwt.md). */
    auth: jwtAuthSchema.optional().meta({ description: 'JWT verification: every route requires a token unless it says `auth: none` ([jwt.md](jwt.md))', defaultText: 'off' }),
    routes: z.array(routeSchema).min(1, 'must list at least one route: a gateway with no routes serves nothing').meta({
      description: 'the routes, tried in order: the first whose method, path and host match serves the request ([configuration.md](configuration.md#routes))',
    }),
    tenants: tenantsSchema
      .default({ header: 'X-Api-Key', unknownKeys: 'reject', keys: [] })
      .meta({ description: "how a request's API key names its tenant ([configuration.md](configuration.md#tenants-and-api-keys))" }),
    defaultRule: z.unknown().optional().meta({
      description: 'the rule for a tenant and route no stored rule matches ([policies.md](policies.md))',
      defaultText: '`{policy: token_bucket, capacity: 20, refillPerSecond: 10}`',
      typeText: 'rule',
      ...restart,
    }),
    rules: z.array(ruleEntrySchema).default([]).meta({
      description: 'seed rules `{tenant, route, policy, …parameters}`, written to the rule store on its first start only ([configuration.md](configuration.md#seed-rules))',
      ...restart,
    }),
    store: storeSchema.default({}).meta({ description: 'where buckets live ([configuration.md](configuration.md#store), [redis.md](redis.md))', ...restart }),
    resilience: resilienceSchema
      .prefault({})
      .meta({ description: 'the resilience layer over Redis: deadline, breaker, fallback, hot keys, regions ([resilience.md](resilience.md))', ...restart }),
    /** Limits every route enforces besides its own (a ceiling over the upstream, a per-IP limit over the whole API). */
    globalLimits: globalLimitsSchema.meta({
      description: "limits every route enforces besides its own, the same entries as a route's `limits`, each with its `rule` ([limits.md](limits.md#global-limits))",
    }),
    notifications: notificationsSchema
      .prefault({})
      .meta({ description: "the sender of limits' `notify:` events: its queue, workers and drain on shutdown ([notifications.md](notifications.md))", ...restart }),
    /** Allow and deny list entries (docs/lists.md): exempt or refuse addresses, networks, tenants, header or claim values. */
    lists: z.array(listEntrySchema).default([]).meta({ description: 'allow and deny list entries: exempt or refuse addresses, networks, tenants, header or claim values, each with an optional expiry ([lists.md](lists.md))' }),
    /** Where the client IP of `key: ip` limits comes from. */
    clientIp: clientIpSchema
      .default(CLIENT_IP_DEFAULTS)
      .meta({ description: 'where the client IP of per-IP limits comes from ([limits.md](limits.md#client-ip))', defaultText: 'the socket address' }),
    headers: headersSchema
      .default({ ietf: false, problemJson: false }),
    limits: limitsSchema
      .default({ maxHeaderBytes: 16_384, maxBodyBytes: 10 * 1024 * 1024, maxQueued: 1_000, ...LISTENER_DEFAULTS })
      .meta({ description: 'what one client may send, and how slowly ([configuration.md](configuration.md#client-limits))' }),
    database: databaseSchema
      .prefault({})
      .meta({ description: 'the rule store: PostgreSQL, or the embedded SQLite store ([configuration.md](configuration.md#database))', ...restart }),
    /** The decision service for proxies (docs/decision-service.md): Envoy RLS over gRPC, /json and forward-auth. */
    decisionService: decisionServiceSchema,
    /** Gateway processes on this machine: a count, or `auto` for one per available core. */
    workers: z.union([positiveInt(1024), z.literal('auto')], 'must be a whole number from 1 to 1024, or auto').optional().meta({
      description: 'gateway processes on this machine, or `auto` for one per available core; more than 1 needs the Redis store ([operations.md](operations.md#workers)); `sluice start --workers N` sets it too',
      defaultText: '`1`',
      env: 'SLUICE_WORKERS',
      ...restart,
    }),
    instances: positiveInt(10_000).optional().meta({
      description: 'a fixed number of gateway instances for the fallback to divide limits by',
      defaultText: 'counted live in Redis',
      env: 'SLUICE_INSTANCES',
      ...restart,
    }),
    region: idSchema.optional().meta({ description: "this instance's region (an id), for rules with `regionShares`", env: 'SLUICE_REGION', ...restart }),
    dataDir: z.string().min(1).optional().meta({ description: 'the embedded rule store and the PostgreSQL rules snapshot', defaultText: '`./data`', env: 'SLUICE_DATA_DIR', ...restart }),
    log: logSchema
      .optional()
      .meta({ description: "the process's log ([operations.md](operations.md#logs))", ...restart }),
    tracing: tracingSchema
      .default(TRACING_DEFAULTS)
      .meta({ description: 'OpenTelemetry traces over OTLP; each `OTEL_*` variable overrides its field ([observability.md](observability.md#traces))', defaultText: 'off', ...restart }),
  })
  .strict()
  .superRefine((file, ctx) =>
    checkResilience({ ...file.resilience, region: file.region }, ctx, { memberTtlMs: ['resilience', 'memberTtlMs'], rebalance: ['resilience', 'rebalance'] }),
  );

export type ConfigFile = z.infer<typeof configFileSchema>;
