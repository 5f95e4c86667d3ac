// The OpenAPI paths and schema of the per-key overrides (override-handlers.ts).
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

export const storedOverrideSchema = {
  type: 'object',
  required: ['limitId', 'selector', 'rule', 'updatedAt'],
  properties: { limitId: { type: 'string' }, selector: { type: 'string', description: 'canonical form' }, rule: ref('Rule'), updatedAt: { type: 'string', format: 'date-time' } },
};

const limitId = { name: 'limitId', in: 'path', required: true, description: "a limit's id (from a route's `limits:`)", schema: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9._~@+-]+$' } };
const selector = {
  name: 'selector',
  in: 'path',
  required: true,
  description:
    '`tenant:ID`, `ip:ADDRESS` or `ip:ADDRESS/LEN` (IPv4 or IPv6; percent-encode the `/` as %2F, or not), or `header:VALUE` (hashed on arrival, never stored; `header:~h.<32 hex>` is taken as the hash). Answers carry the canonical form.',
  schema: { type: 'string' },
};
const list = json({ type: 'object', properties: { overrides: { type: 'array', items: ref('StoredOverride') } } });

/** `errors(...codes)` from openapi.ts, so the error answers read the same everywhere. */
export function overridePaths(errors: (...codes: number[]) => object, authed: object): object {
  return {
    '/overrides': { get: { ...authed, summary: 'List every per-key override', responses: { 200: { description: 'overrides', ...list }, ...errors(401, 403, 503) } } },
    '/limits/{limitId}/overrides': {
      get: { ...authed, summary: "List one limit's overrides", parameters: [limitId], responses: { 200: { description: 'overrides', ...list }, ...errors(400, 401, 403, 503) } },
    },
    '/limits/{limitId}/overrides/{selector}': {
      parameters: [limitId, selector],
      get: { ...authed, summary: 'One override', responses: { 200: { description: 'the override', ...json(ref('StoredOverride')) }, ...errors(400, 401, 403, 404, 503) } },
      put: {
        ...authed,
        summary: "Create or replace the rule of a limit for the keys the selector names (seen by every instance within a second); a route's cost over its capacity answers 503 cost_exceeds_capacity at request time",
        requestBody: { required: true, ...json(ref('Rule')) },
        responses: { 200: { description: 'stored', ...json(ref('StoredOverride')) }, ...errors(400, 401, 403, 413, 503) },
      },
      delete: { ...authed, summary: 'Delete an override', responses: { 204: { description: 'deleted' }, ...errors(400, 401, 403, 404, 503) } },
    },
  };
}
