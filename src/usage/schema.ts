// The config of a limit priced by the response (docs/usage-limits.md): its
// `cost:` (an estimate reserved before forwarding, the actual usage read from
// the response, a fallback when it cannot be read) and its `count:` (which
// answers count at all). Spread into a limit's schema (request-limits/config-schema.ts).
import { z } from 'zod';
import { MAX_COUNT } from '../policies/rule.js';

const HEADER_NAME = /^[A-Za-z0-9-]+$/;
/** A dotted path into a JSON object: `usage.total_tokens`. */
const FIELD_PATH = /^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/;

const units = (what: string) =>
  z
    .number(`${what} must be a number`)
    .int('must be an integer')
    .min(0, 'must be at least 0')
    .max(MAX_COUNT, `must be at most ${MAX_COUNT}`);

const fieldPath = z.string().regex(FIELD_PATH, 'must be a dotted field path, e.g. usage.total_tokens').max(256, 'must be at most 256 characters');

const estimateSchema = z.union(
  [
    units('estimate'),
    z
      .object({
        fromBody: fieldPath.meta({ description: "the request's JSON body field read as the estimate, e.g. `max_tokens`" }),
        default: units('default').meta({ description: 'the estimate when the body has no such number (or is not JSON, or is larger than `limits.bufferBodyBytes`)' }),
      })
      .strict(),
  ],
  'must be a number of units or { fromBody: field, default: N }',
);

const fromSchema = z.union(
  [
    z.object({ header: z.string().regex(HEADER_NAME, 'must be a header name') }).strict(),
    z.object({ json: fieldPath }).strict(),
  ],
  'must be { header: Name } or { json: field.path }',
);

export const usageCostSchema = z
  .object({
    estimate: estimateSchema.meta({ description: 'units reserved before the request is forwarded: a number, or `{ fromBody: max_tokens, default: 1000 }`', typeText: 'integer or object' }),
    from: fromSchema.meta({
      description:
        'where the actual usage is read once the response ends: `{ header: x-usage-tokens }`, or `{ json: usage.total_tokens }` (the JSON body, or for a `text/event-stream` answer the last event carrying the field)',
      typeText: 'object',
    }),
    fallback: units('fallback')
      .optional()
      .meta({ description: 'units charged when the usage is missing or bad (not a number, negative, above the capacity, a stream cut before it)', defaultText: 'the estimate' }),
  })
  .strict();

/** A status (`429`) or a class (`5xx`). */
const statusSchema = z.union([z.number().int('must be an integer').min(100, 'must be at least 100').max(599, 'must be at most 599'), z.enum(['1xx', '2xx', '3xx', '4xx', '5xx'], 'must be a status class 1xx … 5xx')], 'must be a status (e.g. 401) or a class (e.g. 5xx)');

export const countSchema = z.union(
  [
    z.object({ status: z.array(statusSchema).min(1, 'must list at least one status').meta({ description: 'only these answers count (e.g. `[401, 403]`)' }) }).strict(),
    z.object({ skipStatus: z.array(statusSchema).min(1, 'must list at least one status').meta({ description: 'these answers do not count (e.g. `[5xx]`)' }) }).strict(),
  ],
  'must be { status: [...] } or { skipStatus: [...] }',
);

/** A limit's fields for usage pricing and counting by outcome. */
export const usageLimitFields = {
  cost: usageCostSchema
    .optional()
    .meta({ description: "priced by the response: reserve an estimate, settle what the response says ([usage-limits.md](usage-limits.md)); replaces the route's `cost` for this limit", defaultText: "the route's `cost`" }),
  count: countSchema.optional().meta({ description: 'count only some answers by status, e.g. `{ status: [401, 403] }` or `{ skipStatus: [5xx] }`; the others are refunded ([usage-limits.md](usage-limits.md#count-by-outcome))', defaultText: 'every answer' }),
};

export type UsageCostEntry = z.infer<typeof usageCostSchema>;
export type CountEntry = z.infer<typeof countSchema>;
