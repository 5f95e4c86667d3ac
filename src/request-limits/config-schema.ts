// The config file's shape for limits: a route's `limits:`, `anonymous:` and
// `cost:` (the top-level `clientIp:` is in client-ip-schema.ts). Checks across
// routes are in check-limits.ts; rules are checked by parseRule like every
// other rule.
import { z } from 'zod';
import { isValidId } from '../core/ids.js';
import { MAX_COUNT } from '../policies/rule.js';
import { concurrencyFields } from './concurrency-schema.js';
import { usageLimitFields } from '../usage/schema.js';
import { notifySchema } from '../notify/schema.js';

const HEADER_NAME = /^[A-Za-z0-9-]+$/;

const keySourceSchema = z.union(
  [
    z.enum(['tenant', 'ip', 'route', 'tenant+ip']),
    z.object({ header: z.string().regex(HEADER_NAME, 'must be a header name') }).strict(),
    z.object({ claim: z.string().min(1, 'must not be empty').max(256, 'must be at most 256 characters').describe("A claim of the route's verified JWT (auth: jwt), e.g. sub") }).strict(),
    z.object({ body: z.string().regex(/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/, 'must be a dotted field path, e.g. model').max(256, 'must be at most 256 characters').describe("Tenant × a field of the request's JSON body, e.g. model") }).strict(),
  ],
  'must be tenant, ip, route, tenant+ip, { header: Name }, { claim: name } or { body: field }',
);

export const limitSchema = z
  .object({
    id: z
      .string()
      .refine(isValidId, 'must be an id: 1-64 letters, digits or . _ ~ @ + -')
      .refine((id) => !id.includes('~'), 'must not contain ~ (reserved for the ids Sluice derives from requests)')
      .meta({ description: "the limit's id (no `~`): bucket keys and metrics name it" }),
    key: keySourceSchema.default('tenant').meta({ description: 'what one bucket counts: `tenant`, `ip`, `route`, `tenant+ip`, `{ header: Name }`, `{ claim: name }` of the verified JWT ([limits.md](limits.md#route-fields)) or `{ body: model }`, tenant × a JSON body field ([usage-limits.md](usage-limits.md))' }),
    rule: z.unknown().optional().meta({ description: "the limit's rule ([policies.md](policies.md)); without one, the rule store's rule for the tenant and route", typeText: 'rule' }),
    penalty: z.unknown().optional().meta({
      description:
        'a penalty box (`kind: rate` only): `{after, withinMs, blockMs, backoff?, maxMs?, forgiveAfterMs?}`; after `after` refusals within `withinMs` the key is refused for `blockMs`, times `backoff` on each repeat up to `maxMs` ([policies.md](policies.md#a-penalty-box))',
      typeText: 'penalty',
      defaultText: 'none',
    }),
    /** `rate` (the default): a rule's bucket; `concurrency`: at most `max` requests (or tunnels) open at once (check-concurrency.ts). */
    kind: z
      .enum(['rate', 'concurrency'], 'must be rate or concurrency')
      .default('rate')
      .meta({ description: "`rate`: a rule's bucket; `concurrency`: at most `max` requests (or WebSocket tunnels) of one key open at once, cluster-wide ([limits.md](limits.md#concurrency-limits))" }),
    ...concurrencyFields,
    ...usageLimitFields,
    notify: notifySchema.optional().meta({ description: 'signed webhook events when a tenant reaches thresholds of this limit, once per window ([notifications.md](notifications.md))', defaultText: 'off' }),
  })
  .strict();

/** Fields a route gains for limits (spread into the route schema). */
export const routeLimitFields = {
  /** No API key needed; every limit must then be keyed by ip, header or route. */
  anonymous: z.boolean().default(false).meta({ description: "no API key needed; the route's limits are keyed by client IP, a header, a JWT claim or the route ([limits.md](limits.md))" }),
  /** Units one request of this route takes from each of its limits. */
  cost: z
    .number()
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(MAX_COUNT, `must be at most ${MAX_COUNT}`)
    .default(1)
    .meta({ description: "units one request takes from each of the route's limits (the global ones included) ([limits.md](limits.md#cost))" }),
  limits: z
    .array(limitSchema)
    .optional()
    .meta({ description: 'what a request is counted against, all decided together ([limits.md](limits.md#route-fields))', defaultText: 'one limit per tenant, named after the route' }),
};

/** The top-level `globalLimits:`: limits every route enforces besides its own. */
export const globalLimitsSchema = z.array(limitSchema).default([]);

export type LimitEntry = z.infer<typeof limitSchema>;
