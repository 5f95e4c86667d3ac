// The config file's shape for `auth: { kind: jwt, … }` (top level: every route;
// on a route: that route, or `auth: none` to opt out). Each option carries its
// own description: the config reference is generated from the schemas. Checks
// that read files or compare fields (one key source, algorithms that fit the
// key) are in jwt-config.ts, so their errors name the field too.
import { z } from 'zod';

/** The JWS algorithms a config may allow; `none` is not among them, ever. */
export const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;
export type JwtAlgorithm = (typeof JWT_ALGORITHMS)[number];

const HEADER_NAME = /^[A-Za-z0-9-]+$/;
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A claim name as it appears in the payload (`sub`, `org_id`, `https://example.com/plan`). */
const claimName = z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters');
const positiveInt = (max: number) => z.number().int('must be an integer').min(1, 'must be at least 1').max(max, `must be at most ${max}`);

const tokenSourceSchema = z
  .union(
    [
      z.object({ header: z.string().regex(HEADER_NAME, 'must be a header name').describe('A request header holding the token (with or without a `Bearer ` prefix).') }).strict(),
      z.object({ cookie: z.string().regex(COOKIE_NAME, 'must be a cookie name').describe('A cookie holding the token.') }).strict(),
    ],
    'must be { header: Name } or { cookie: name }',
  )
  .describe('Where the token is read from; absent: `Authorization: Bearer <token>`.');

const jwksOptionsSchema = z
  .object({
    timeoutMs: positiveInt(60_000).default(2_000).describe('Longest one fetch of jwksUrl may take; a request waiting on it gets 503 auth_unavailable after this.'),
    cooldownMs: z
      .number()
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(3_600_000, 'must be at most 3600000')
      .default(30_000)
      .describe('At most one fetch of jwksUrl per this many ms, whatever the outcome: an unknown `kid` or a failing server cannot make the gateway fetch faster.'),
    cacheMaxAgeMs: positiveInt(86_400_000).default(600_000).describe('The key set is refreshed in the background once it is this old; the cached keys keep serving meanwhile.'),
  })
  .strict()
  .describe('How the key set at jwksUrl is fetched and cached.');

const cacheSchema = z
  .object({
    maxEntries: z
      .number()
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(1_000_000, 'must be at most 1000000')
      .default(10_000)
      .describe('Verified tokens kept (by their SHA-256, never the token), least recently used out first; 0: every request verifies its token.'),
    maxAgeSeconds: positiveInt(3_600)
      .default(60)
      .describe("A cached token is verified again this long after it was, or at its `exp`, whichever is first: how long a token whose key left the key set can still pass (a jwksUrl set that changes clears the cache at once)."),
  })
  .strict()
  .describe('Tokens already verified skip the signature check until they expire or grow old.');

const stringOrList = z.union([z.string().min(1, 'must not be empty'), z.array(z.string().min(1, 'must not be empty')).min(1, 'must list at least one value')], 'must be a string or a list of strings');

export const jwtAuthSchema = z
  .object({
    kind: z.literal('jwt', 'must be jwt').describe('The kind of authentication; `jwt` is the one there is.'),
    algorithms: z
      .array(z.enum(JWT_ALGORITHMS, `must be one of ${JWT_ALGORITHMS.join(', ')}`))
      .min(1, 'must list at least one algorithm')
      .describe('The JWS algorithms accepted (required: a token naming another, or `none`, is refused). HS* need a secret; the others a public key.'),
    secretFile: z.string().min(1, 'must not be empty').optional().describe('HS*: a file holding the shared secret (at least 32 bytes; a trailing newline is dropped).'),
    secretEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .optional()
      .describe('HS*: the environment variable holding the shared secret (its name, never the secret, is in the config).'),
    publicKeyFile: z.string().min(1, 'must not be empty').optional().describe('RS*/PS*/ES*/EdDSA: a PEM file holding the public key (SPKI or an X.509 certificate).'),
    jwksFile: z.string().min(1, 'must not be empty').optional().describe('RS*/PS*/ES*/EdDSA: a JSON file holding a JWK or a JWK set (`{"keys": [...]}`); the token\'s `kid` picks the key.'),
    jwksUrl: z
      .string()
      .regex(/^https?:\/\/\S+$/, 'must be an http:// or https:// URL')
      .optional()
      .describe("RS*/PS*/ES*/EdDSA: the identity provider's JWK set URL, fetched, cached and fetched again on an unknown `kid` (see jwks)."),
    jwks: jwksOptionsSchema.prefault({}),
    cache: cacheSchema.prefault({}),
    issuer: stringOrList.optional().describe('The `iss` a token must carry (one of them, given a list); absent: not checked.'),
    audience: stringOrList.optional().describe('The `aud` a token must carry (one of them, given a list); absent: not checked.'),
    clockToleranceSeconds: z
      .number()
      .int('must be an integer')
      .min(0, 'must be at least 0')
      .max(600, 'must be at most 600')
      .default(30)
      .describe('Clock skew allowed when `exp` and `nbf` are checked, in seconds.'),
    maxTokenBytes: z
      .number()
      .int('must be an integer')
      .min(256, 'must be at least 256')
      .max(1_048_576, 'must be at most 1048576')
      .default(8_192)
      .describe('A token longer than this is refused (401, too_large) before it is parsed.'),
    token: tokenSourceSchema.optional(),
    tenantClaim: claimName.optional().describe('The claim naming the tenant (e.g. `org_id`); its rules and overrides apply. Absent: the tenant comes from the API key as without auth.'),
    planClaim: claimName.optional().describe("The claim naming the caller's plan (e.g. `plan`); absent or missing in a token: the tenant's assignment."),
    forwardClaims: z
      .record(claimName, z.string().regex(HEADER_NAME, 'must be a header name'))
      .default({})
      .describe("Claims sent to the upstream as headers the gateway sets, e.g. `{ sub: X-User-Id }`; the client's own headers of those names are dropped."),
  })
  .strict()
  .describe('Requests must carry a valid JWT; its claims can name the tenant, the plan and limit keys.');

/** A route's `auth:` — its own, or `none` to serve the route without the top-level auth. */
export const routeAuthSchema = z
  .preprocess(
    (value) => (value === 'none' ? { kind: 'none' } : value),
    z.discriminatedUnion('kind', [z.object({ kind: z.literal('none') }).strict(), jwtAuthSchema], 'must be none or { kind: jwt, … }'),
  )
  .optional()
  .describe("This route's authentication: `none`, or its own `{ kind: jwt, … }`; absent: the top-level `auth:`.");

export type JwtAuthEntry = z.infer<typeof jwtAuthSchema>;
