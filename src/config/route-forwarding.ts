// A route's forwarding options in sluice.yaml: which host it answers, its
// upstream instances, how the path is rewritten and which headers are set or
// removed on the way. Cross-field checks (stripPrefix needs a prefix pattern,
// a rewrite pattern must compile) are here too, so each error names its field.
import { z } from 'zod';

const httpOrigin = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.pathname === '/' && !url.search;
  } catch {
    return false;
  }
}, 'must be an http(s) URL with no path, e.g. http://127.0.0.1:8090');

const instanceSchema = z.union([
  httpOrigin,
  z
    .object({
      url: httpOrigin,
      weight: z.number().int('must be an integer').min(1, 'must be at least 1').max(100, 'must be at most 100').default(1),
    })
    .strict(),
]);

/** One URL, or a list of instances balanced by weight. */
export const upstreamSchema = z.union([httpOrigin, z.array(instanceSchema).min(1, 'must list at least one instance').max(64, 'must list at most 64 instances')]);

/** A header name as RFC 9110 spells a token. */
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be a header name');
/** No CR, LF or NUL: a value can never split the request. */
const headerValue = z.string().max(8192, 'must be at most 8192 characters').regex(/^[^\r\n\0]*$/, 'must not hold CR, LF or NUL');

export const headerEditsSchema = z
  .object({
    /** Set (replace) these; `{tenant}`, `{route}` and `{clientIp}` are filled per request. */
    set: z.record(headerName, headerValue).default({}).meta({ description: 'header name → value; a value may hold `{tenant}`, `{route}` and `{clientIp}` (a header whose value fills to nothing is left out)' }),
    remove: z.array(headerName).default([]).meta({ description: 'header names removed' }),
  })
  .strict();

/** `*.example.com` or an exact host name, without a port. */
/** `api.example.com` or `*.example.com`: a route's host and a certificate's SNI names alike. */
export const HOST_NAME_PATTERN = /^(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

const hostPattern = z
  .string()
  .regex(HOST_NAME_PATTERN, 'must be a host name such as api.example.com or *.example.com')
  .transform((host) => host.toLowerCase());

const rewriteSchema = z
  .object({
    /** A regular expression over the path (the query is kept as sent). */
    pattern: z.string().min(1, 'must not be empty').max(512, 'must be at most 512 characters').meta({ description: 'a regular expression over the path (not the query)' }),
    /** What a match becomes; `$1`… name the pattern's groups. */
    replacement: z.string().regex(/^\//, 'must start with /').max(2048, 'must be at most 2048 characters').meta({ description: 'what a match becomes; `$1`… name the groups' }),
  })
  .strict()
  .superRefine((rewrite, ctx) => {
    try {
      new RegExp(rewrite.pattern);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: `is not a regular expression: ${(error as Error).message}` });
    }
  });

/** Ask each instance `GET path` every intervalMs; one that fails is out of rotation until a check passes. */
export const healthCheckSchema = z
  .object({
    path: z.string().regex(/^\/[^\s]*$/, 'must be a path such as /healthz').meta({ description: 'asked with `GET` on each instance; a `2xx` or `3xx` keeps it in rotation' }),
    intervalMs: z.number().int('must be an integer').min(100, 'must be at least 100').max(3_600_000, 'must be at most 3600000').default(5_000).meta({ description: 'time between rounds (rounds never overlap)' }),
    timeoutMs: z.number().int('must be an integer').min(10, 'must be at least 10').max(60_000, 'must be at most 60000').default(2_000).meta({ description: 'how long one check may take' }),
  })
  .strict();

export const routeForwardingFields = {
  host: hostPattern.optional().meta({
    description: "only requests whose `Host` is this name (any case, any port, with or without a trailing dot) or, with `*.example.com`, any name under it (not `example.com` itself)",
    defaultText: 'any host',
  }),
  upstream: upstreamSchema.meta({
    description:
      'the origin to forward to: an `http(s)://host:port` URL with no path, or a list of instances (`[URL, { url: URL, weight: 3 }]`, weights 1 to 100) balanced by smooth weighted round robin ([configuration.md](configuration.md#several-upstream-instances))',
  }),
  /** For a `/prefix/*` route: forward without the prefix (`/api/orders` → `/orders`). */
  stripPrefix: z.boolean().default(false).meta({ description: 'for a `/prefix/*` route: forward without the prefix (`/api/orders?x=1` → `/orders?x=1`, `/api` → `/`)' }),
  /** Match the path lower-cased: for an upstream that serves `/API/Login` as `/api/login`. */
  caseInsensitive: z
    .boolean()
    .default(false)
    .meta({ description: 'match the path lower-cased (`/API/Login` meets `path: /api/login`), for an upstream that ignores case; the upstream is sent the path as the client spelled it' }),
  rewrite: rewriteSchema.optional().meta({
    description: "`{ pattern, replacement }`: the path through a regular expression (`{ pattern: '^/v1/(.*)$', replacement: '/v2/$1' }`); not with `stripPrefix`. A result that would leave the replacement's literal directory is refused with `400 invalid_path`",
    defaultText: 'none',
  }),
  requestHeaders: headerEditsSchema.optional().meta({ description: 'header edits before the upstream, e.g. `{ set: { X-Tenant-Id: \'{tenant}\' }, remove: [X-Api-Key] }`', defaultText: 'none' }),
  responseHeaders: headerEditsSchema.optional().meta({ description: "the same on the upstream's response (e.g. `remove: [Server]`); the gateway's own `X-RateLimit-*` headers are added after", defaultText: 'none' }),
  /** Ask each instance `GET path` every intervalMs; one that fails is out of rotation until a check passes. */
  healthCheck: healthCheckSchema
    .optional()
    .meta({ description: 'an active check of each upstream instance; one that fails is out of rotation until a check passes', defaultText: 'off (passive health only)' }),
  /** Idempotent methods retried once on another instance after one of these statuses (a refused connection is always retried). */
  retryOn: z
    .array(z.union([z.literal(502), z.literal(503), z.literal(504)], 'must be 502, 503 or 504'))
    .default([])
    .meta({ description: 'statuses after which a `GET`, `HEAD`, `OPTIONS`, `PUT` or `DELETE` with a body read whole is sent once to another instance; never a `POST` or `PATCH`' }),
};

/** Checks across a route's fields; `fail` names the field. */
export function checkRouteForwarding(route: { path: string; stripPrefix: boolean; rewrite?: unknown }, fail: (field: string, message: string) => never): void {
  if (route.stripPrefix && !route.path.endsWith('/*')) fail('stripPrefix', 'needs a prefix path such as /api/*');
  if (route.stripPrefix && route.rewrite !== undefined) fail('rewrite', 'cannot be combined with stripPrefix: write the prefix into the rewrite pattern');
}

export interface UpstreamInstance {
  readonly url: string;
  readonly weight: number;
}

/** The file's `upstream:` as a list of weighted instances. */
export function upstreamInstances(upstream: z.infer<typeof upstreamSchema>): UpstreamInstance[] {
  const list = typeof upstream === 'string' ? [upstream] : upstream;
  return list.map((entry) => (typeof entry === 'string' ? { url: entry, weight: 1 } : { url: entry.url, weight: entry.weight }));
}
