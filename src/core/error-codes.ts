// Every error code a user of Sluice can see, in one place: what the gateway
// answers its clients, what the admin API, the library and the CLI report, and
// what the config check prints. docs/errors.md is generated from this list
// (scripts/errors-doc.ts; test/docs/errors.test.ts keeps the two equal).
//
// Two spellings, because two wire formats exist: the gateway answers API
// clients with a short snake_case name (`{"error":"rate_limited"}`), while the
// admin API, the library's SluiceError and the CLI use `ERR_*` codes
// (`{"error":{"code","field","message"}}`). Errors that never reach a user
// (a Redis call past its deadline, a body cut off mid-stream) are internal
// classes and are not listed: the user sees the code they are mapped to.

export interface ErrorEntry {
  /** HTTP status of the answer carrying it (a SluiceError's `status`). */
  readonly status: number;
  /** What happened, in one line. */
  readonly meaning: string;
  /** What to do about it, in one line. */
  readonly action: string;
  /** A 503's Retry-After (seconds) when the answer has none of its own to give (nothing measured says when it clears). */
  readonly retryAfterSeconds?: number;
}

/** What the gateway sends its clients, as `{"error":"<name>"}` (the 429 adds `retryAfterMs`). */
export const GATEWAY_ERRORS = {
  rate_limited: {
    status: 429,
    meaning: "the tenant's limit for this route is used up",
    action: 'retry after the Retry-After header (seconds; the body has retryAfterMs); if it happens in normal use, ask for a higher limit',
  },
  blocked: {
    status: 429,
    meaning: "the key kept hitting a limit that has a penalty box (`penalty:`): it is refused until the block ends, whatever its limit holds; each repeat offence blocks longer",
    action: 'retry after the Retry-After header (seconds; the body has retryAfterMs and blockedUntilMs, ms since the epoch), and slow down: requests during the block change nothing; operators can list and lift blocks (docs/admin-api.md#penalty-blocks)',
  },
  concurrency_limited: {
    status: 429,
    meaning: "a `kind: concurrency` limit of the route already has its `max` requests (or WebSocket tunnels) of this key open",
    action: 'retry after the Retry-After header (1 s), or once one of your open requests or tunnels ends; the body names the limit',
  },
  missing_api_key: {
    status: 401,
    meaning: 'the request carries no API key',
    action: 'send the key in the header the config names (`tenants.header`, default `X-Api-Key`)',
  },
  unknown_api_key: {
    status: 401,
    meaning: 'the API key was never issued or has been revoked',
    action: 'check the key; an operator can issue one with `sluice keys create TENANT`',
  },
  invalid_token: {
    status: 401,
    meaning:
      "the route requires a JWT (`auth: { kind: jwt }`) and the request's is missing or fails a check; the body's `reason` (and WWW-Authenticate's error_description) names which: missing, malformed, too_large, expired, not_yet_valid, bad_issuer, bad_audience, bad_signature, unknown_key, bad_algorithm, bad_claim",
    action: 'send a valid token from the identity provider, as docs/jwt.md describes; the reason says what to fix (a new token for expired, the right audience for bad_audience, …)',
  },
  missing_limit_claim: {
    status: 401,
    meaning: "a limit of the route is keyed by a JWT claim (`key: {claim: …}`) that the verified token does not carry (or holds an object or a list)",
    action: 'ask the identity provider for a token with that claim; operators: key the limit by a claim every token has',
  },
  auth_unavailable: {
    status: 503,
    meaning: "the route's JWK set (`auth.jwksUrl`) could not be fetched within `auth.jwks.timeoutMs`, and no cached key verifies the token",
    action: 'retry after Retry-After; operators: check that the jwksUrl answers (the gateway asks at most once per `auth.jwks.cooldownMs`)',
    retryAfterSeconds: 5,
  },
  denied: {
    status: 403,
    meaning: 'a deny list entry (`lists:` in the config, or the rule store) matches the request: its address or network, its tenant, a header value or a JWT claim; the body names this code, never the entry',
    action: 'if the block is a mistake, ask the operator; operators: see the `lists:` entries (docs/lists.md)',
  },
  no_route: { status: 404, meaning: 'no configured route matches the method and path', action: "check the URL and method against the config's routes" },
  bad_request: {
    status: 400,
    meaning: 'the HTTP request is malformed (e.g. a body shorter than its Content-Length)',
    action: "fix the client's request",
  },
  invalid_path: {
    status: 400,
    meaning: "the request path cannot be normalized: it carries a fragment (`#`), a malformed escape (`%zz`) or a `..` that climbs above the root, or the route's rewrite of it would leave the route's target",
    action: 'send the path without `#…` and without `..` segments above the root',
  },
  invalid_host: {
    status: 400,
    meaning: 'the Host header (or `:authority`) is not a host name, an IP address or `[IPv6]`, with an optional port, or it came more than once',
    action: 'send one Host header naming the host, e.g. `api.example.com` or `api.example.com:8080`',
  },
  duplicate_api_key: {
    status: 400,
    meaning: 'the API key header came more than once, or with a comma-separated list of values',
    action: 'send the key once, in one header',
  },
  upgrade_with_body: {
    status: 400,
    meaning: 'an upgrade request (WebSocket) carries a body (Content-Length above 0 or Transfer-Encoding)',
    action: 'send the upgrade request without a body, as RFC 6455 asks',
  },
  headers_too_large: { status: 431, meaning: 'the request headers exceed `limits.maxHeaderBytes`', action: 'send smaller headers, or raise `limits.maxHeaderBytes`' },
  body_too_large: { status: 413, meaning: 'the request body exceeds `limits.maxBodyBytes`', action: 'send a smaller body, or raise `limits.maxBodyBytes`' },
  request_timeout: {
    status: 408,
    meaning: 'the client sent its headers or body too slowly (`limits.headerTimeoutMs`, `requestTimeoutMs`, `bodyIdleTimeoutMs`)',
    action: 'send the request without pauses, or raise the limit named',
  },
  upstream_unreachable: {
    status: 502,
    meaning: "the route's upstream refused or dropped the connection",
    action: "check that the upstream at the route's upstream URL is up",
  },
  upstream_timeout: { status: 504, meaning: "the upstream did not answer within the route's timeoutMs", action: "speed up the upstream, or raise the route's timeoutMs" },
  store_unavailable: {
    status: 503,
    meaning: 'Redis is unreachable and the rule says `onStoreDown: closed`',
    action: 'retry after Retry-After; operators: bring Redis back, or choose `onStoreDown: fallback`',
  },
  missing_limit_header: {
    status: 400,
    meaning: "a route limited per request header (`key: {header: …}`) got a request without that header",
    action: 'send the header (usually set by the auth proxy in front of Sluice)',
  },
  missing_limit_field: {
    status: 400,
    meaning: "a route limited per field of the JSON body (`key: {body: …}`, e.g. an LLM's `model`) got a request whose body is not JSON, is larger than `limits.bufferBodyBytes`, or lacks that field (a string or number)",
    action: 'send the field in a JSON body (Content-Type application/json)',
  },
  cost_exceeds_capacity: {
    status: 503,
    meaning: "the route's cost per request is above the capacity of the rule the rule store now holds for it",
    action: "operators: raise the rule's capacity or lower the route's `cost`; clients: retry after Retry-After (60 s: it takes an operator to clear)",
    retryAfterSeconds: 60,
  },
  queue_full: {
    status: 503,
    meaning: 'too many requests are already held for shaping (`limits.maxQueued`)',
    action: 'retry after Retry-After; operators: raise `limits.maxQueued` or lower the leaky bucket burst',
  },
  internal_error: {
    status: 500,
    meaning: 'a bug in the gateway',
    action: "report it with the gateway's log line 'unexpected error in the limiter path'",
  },
  method_not_supported: { status: 501, meaning: 'a CONNECT request: the gateway is not a forward proxy', action: 'send plain HTTP requests to the gateway' },
} as const satisfies Record<string, ErrorEntry>;

/** What the admin API answers (`{"error":{"code","field","message"}}`), the library throws (SluiceError) and the CLI prints. */
export const SLUICE_ERRORS = {
  ERR_RULE_INVALID: {
    status: 400,
    meaning: 'a rule breaks the rule schema: unknown policy, a missing or out-of-range parameter, an unknown field',
    action: 'fix the field the error names (see docs/policies.md); nothing was written',
  },
  ERR_ID_INVALID: {
    status: 400,
    meaning: 'a tenant, route or key id is empty, over 64 characters, has a character outside `A-Z a-z 0-9 . _ ~ @ + -`, or (a tenant) starts with `~`',
    action: 'use an id of those characters; nothing was written',
  },
  ERR_COST_INVALID: {
    status: 400,
    meaning: "a request's cost is not a positive integer, or exceeds what the rule could ever grant",
    action: "pass a cost between 1 and the rule's capacity",
  },
  ERR_CONFIG_INVALID: {
    status: 400,
    meaning: 'the config file, an `SLUICE_*` variable (e.g. a data dir another process holds) or a library option is invalid',
    action: 'fix the field the message names (with file:line); `sluice check --config FILE` runs the same checks as start',
  },
  ERR_BAD_REQUEST: {
    status: 400,
    meaning: 'an admin request is malformed: bad JSON, an unknown field, a missing body, bad percent-encoding',
    action: 'fix the request as the message says (`GET /openapi.json` describes every endpoint)',
  },
  ERR_UNAUTHORIZED: {
    status: 401,
    meaning: 'the admin token is missing or wrong',
    action: 'send `Authorization: Bearer $SLUICE_ADMIN_TOKEN`; for the CLI, export SLUICE_ADMIN_TOKEN',
  },
  ERR_FORBIDDEN: {
    status: 403,
    meaning: "the admin token is valid but its role does not allow this endpoint (`read`: GET only; `write`: rules, overrides, plans, keys; `admin`: tokens and reloads too)",
    action: 'use a token of a role that allows it (`sluice tokens create NAME ROLE` with an `admin` token), or ask whoever holds one',
  },
  ERR_ADMIN_DISABLED: {
    status: 403,
    meaning: 'the admin API is off because the gateway was started without SLUICE_ADMIN_TOKEN',
    action: 'set SLUICE_ADMIN_TOKEN to a long random secret and restart the gateway',
  },
  ERR_NOT_FOUND: {
    status: 404,
    meaning: 'no such endpoint, rule or key',
    action: 'check the path (`GET /openapi.json` lists the endpoints) or the id',
  },
  ERR_PLAN_EXISTS: { status: 409, meaning: 'a plan of that name exists already', action: 'pick another name, or change the existing plan with `PUT /plans/{name}/limits/...`' },
  ERR_PLAN_IN_USE: {
    status: 409,
    meaning: 'a plan cannot be deleted while a tenant or an API key is on it',
    action: 'move them first (`GET /plans/{name}/assignments` lists them; `sluice plans assign OTHER --tenant T`), then delete it',
  },
  ERR_LIST_ENTRY_INVALID: {
    status: 400,
    meaning: 'an allow or deny list entry is refused: a CIDR that does not parse, an action other than allow or deny, no or two match fields, an expiry that is no ISO 8601 time or is past, an unknown route, a limit on a deny entry, an unknown or concurrency limit, a claim entry where no route verifies tokens',
    action: 'fix the field the message names (docs/lists.md lists the fields); nothing was written',
  },
  ERR_METHOD_NOT_ALLOWED: { status: 405, meaning: 'the endpoint exists but not with this method', action: 'use a method the message lists' },
  ERR_BODY_TOO_LARGE: { status: 413, meaning: 'an admin request body is over 64 KiB', action: 'send a smaller body: one rule per PUT' },
  ERR_STORE_UNAVAILABLE: {
    status: 503,
    meaning: 'the rule store (PostgreSQL), or Redis for a bucket reset, is unreachable or did not answer in time; a rule or key write answered so is never applied later',
    action: 'read the value back, then retry; operators: bring the store back (the message names it and the setting that bounds the wait)',
  },
  ERR_INTERNAL: { status: 500, meaning: 'a bug in the admin API', action: "report it with the admin API's log" },
} as const satisfies Record<string, ErrorEntry>;

export interface CliErrorEntry extends Omit<ErrorEntry, 'status'> {
  /** The exit status of a command that fails with it. */
  readonly exit: number;
}

/** The CLI's own errors, printed as `error: <message> (<code>)`; it prints the codes above too. */
export const CLI_ERRORS = {
  ERR_ADMIN_UNREACHABLE: {
    exit: 1,
    meaning: 'the CLI cannot reach the admin API',
    action: 'start the gateway, or point the CLI at it with `--admin URL` or `SLUICE_ADMIN_URL`',
  },
  ERR_MIGRATION_FAILED: {
    exit: 1,
    meaning: '`sluice migrate` could not apply a migration; the schema is as it was (one transaction)',
    action: 'read the database error in the message, fix the database, and run it again',
  },
  ERR_USAGE: { exit: 2, meaning: 'a CLI command was given wrong or missing arguments (printed with the usage, without the code)', action: 'follow the usage the CLI prints' },
} as const satisfies Record<string, CliErrorEntry>;

export type GatewayErrorName = keyof typeof GATEWAY_ERRORS;
export type ErrorCode = keyof typeof SLUICE_ERRORS;
export type CliErrorCode = keyof typeof CLI_ERRORS;

/** Whether `code` is one a user may look up in docs/errors.md. */
export function isCatalogued(code: unknown): code is ErrorCode | CliErrorCode {
  return typeof code === 'string' && (Object.hasOwn(SLUICE_ERRORS, code) || Object.hasOwn(CLI_ERRORS, code));
}

/** The Retry-After (seconds) a gateway 503 carries when its answer computed none: every 503 tells the client when to come back. */
export function defaultRetryAfter(name: GatewayErrorName): number | undefined {
  const entry: ErrorEntry = GATEWAY_ERRORS[name];
  return entry.status === 503 ? (entry.retryAfterSeconds ?? 1) : undefined;
}

/** The gateway's JSON body for `name`. */
export function gatewayErrorBody(name: GatewayErrorName): string {
  return `{"error":"${name}"}`;
}
