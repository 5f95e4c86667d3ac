// The OpenAPI paths and schemas of the allow and deny lists (list-handlers.ts).
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const id = { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9._~@+-]+$' };
const time = { type: 'string', format: 'date-time' };
const named = (what: string, valueDescription: string) => ({
  type: 'object',
  required: ['name', 'value'],
  additionalProperties: false,
  description: `the ${what} and its exact value`,
  properties: { name: { type: 'string', minLength: 1, maxLength: 256 }, value: { type: 'string', minLength: 1, maxLength: 4096, description: valueDescription } },
});
const hashed = (what: string) => ({ type: 'object', required: ['name', 'valueSha256'], properties: { name: { type: 'string' }, valueSha256: { type: 'string', description: `SHA-256 (base64url) of the ${what}'s value: the value itself is never kept` } } });
const common = {
  action: { enum: ['allow', 'deny'] },
  cidr: { type: 'string', description: 'an IPv4 or IPv6 address or network, e.g. 203.0.113.0/24 or 2001:db8::/32' },
  tenant: id,
  routes: { type: 'array', minItems: 1, items: id, description: 'the routes it applies to; absent: every route' },
  limit: { ...id, description: 'allow only: the rate limit it lifts (the others still apply)' },
  expiresAt: { ...time, description: 'when it stops applying; absent: never' },
  note: { type: 'string', maxLength: 500, description: 'why it exists; never sent to clients' },
};

export const listSchemas = {
  NewListEntry: {
    type: 'object',
    required: ['action'],
    additionalProperties: false,
    description: 'exactly one of cidr, tenant, header and claim',
    properties: { ...common, header: named('request header', 'kept only as its SHA-256'), claim: named('verified JWT claim', 'kept only as its SHA-256') },
  },
  ListEntry: {
    type: 'object',
    required: ['id', 'action', 'createdAt'],
    properties: { id: { type: 'string' }, ...common, header: hashed('header'), claim: hashed('claim'), createdAt: time, expired: { type: 'boolean', description: 'listings only: its expiry has passed, so it no longer applies' } },
  },
};

/** `errors(...codes)` from openapi.ts, so the error answers read the same everywhere. */
export function listPaths(errors: (...codes: number[]) => object, authed: object): object {
  return {
    '/lists': {
      get: { ...authed, summary: 'List the allow and deny list entries in the rule store (expired ones marked)', responses: { 200: { description: 'entries', ...json({ type: 'object', properties: { entries: { type: 'array', items: ref('ListEntry') } } }) }, ...errors(401, 403, 503) } },
      post: {
        ...authed,
        summary: 'Add an allow or deny list entry (applied by every instance within a second); 400 ERR_LIST_ENTRY_INVALID names the refused field',
        requestBody: { required: true, ...json(ref('NewListEntry')) },
        responses: { 201: { description: 'stored', ...json(ref('ListEntry')) }, ...errors(400, 401, 403, 413, 503) },
      },
    },
    '/lists/{id}': {
      parameters: [{ name: 'id', in: 'path', required: true, description: 'the entry', schema: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } }],
      get: { ...authed, summary: 'One list entry', responses: { 200: { description: 'the entry', ...json(ref('ListEntry')) }, ...errors(400, 401, 403, 404, 503) } },
      delete: { ...authed, summary: 'Delete a list entry (stops applying on every instance within a second)', responses: { 204: { description: 'deleted' }, ...errors(400, 401, 403, 404, 503) } },
    },
  };
}
