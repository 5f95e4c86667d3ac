// The OpenAPI paths and schemas of named tokens, the audit log, /whoami and the
// tenant of a key's hash (team-handlers.ts).
import { AUDIT_KINDS, ROLES } from '../rules/admin/tokens-and-audit.js';

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const query = (name: string, description: string, schema: object = { type: 'string' }) => ({ name, in: 'query', description, schema });

export const teamSchemas = {
  AdminToken: { type: 'object', required: ['name', 'role', 'createdAt'], properties: { name: { type: 'string' }, role: { type: 'string', enum: [...ROLES] }, createdAt: { type: 'string', format: 'date-time' } } },
  CreatedToken: { type: 'object', required: ['name', 'role', 'token', 'createdAt'], properties: { name: { type: 'string' }, role: { type: 'string', enum: [...ROLES] }, token: { type: 'string', description: 'the clear token: shown once, only its SHA-256 is stored' }, createdAt: { type: 'string', format: 'date-time' } } },
  AuditEntry: {
    type: 'object',
    required: ['id', 'at', 'actor', 'address', 'kind', 'action', 'target', 'before', 'after', 'outcome'],
    properties: {
      ...{ id: { type: 'integer' }, at: { type: 'string', format: 'date-time' }, actor: { type: 'string', description: "the token's name (`bootstrap`: SLUICE_ADMIN_TOKEN)" }, address: { type: 'string' } },
      ...{ kind: { type: 'string', enum: [...AUDIT_KINDS] }, action: { type: 'string', description: 'method and endpoint, e.g. `PUT /rules/{tenant}/{route}`' }, target: { type: 'string' } },
      ...{ before: { description: 'the state before (null: none)' }, after: { description: 'the state after (null: deleted); a failed write: as before' }, outcome: { type: 'string', enum: ['ok', 'failed'] }, error: { type: 'string' } },
    },
  },
};

/** `errors(...codes)` from openapi.ts, so the error answers read the same everywhere. */
export function teamPaths(errors: (...codes: number[]) => object, authed: object): object {
  const name = { name: 'name', in: 'path', required: true, schema: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' } };
  return {
    '/whoami': { get: { ...authed, summary: "The calling token's name and role", responses: { 200: { description: 'who', ...json(ref('AdminToken')) }, ...errors(401, 403) } } },
    '/tokens': {
      get: { ...authed, summary: 'List named admin tokens (role admin; never the tokens)', responses: { 200: { description: 'tokens', ...json({ type: 'object', properties: { tokens: { type: 'array', items: ref('AdminToken') } } }) }, ...errors(401, 403, 503) } },
      post: {
        ...authed,
        summary: 'Create a named token (role admin); the clear token is in this response only',
        requestBody: { required: true, ...json({ type: 'object', required: ['name', 'role'], additionalProperties: false, properties: { name: { type: 'string', maxLength: 64 }, role: { type: 'string', enum: [...ROLES] } } }) },
        responses: { 201: { description: 'created', ...json(ref('CreatedToken')) }, ...errors(400, 401, 403, 413, 503) },
      },
    },
    '/tokens/{name}': {
      delete: { ...authed, summary: 'Revoke a token (role admin): refused on every instance sharing the store within a second', parameters: [name], responses: { 204: { description: 'revoked' }, ...errors(400, 401, 403, 404, 503) } },
    },
    '/audit': {
      get: {
        ...authed,
        summary: 'The audit log of every write, newest first (role read); `next` is the cursor of the next page',
        parameters: [
          ...[query('since', 'ISO time, inclusive'), query('until', 'ISO time, exclusive'), query('actor', "a token's name"), query('kind', 'what changed', { type: 'string', enum: [...AUDIT_KINDS] })],
          ...[query('limit', 'entries per page (1 to 1000, default 100)', { type: 'integer' }), query('cursor', "the previous page's `next`", { type: 'integer' })],
        ],
        responses: { 200: { description: 'entries', ...json({ type: 'object', required: ['entries'], properties: { entries: { type: 'array', items: ref('AuditEntry') }, next: { type: 'string' } } }) }, ...errors(400, 401, 403, 503) },
      },
    },
    '/tenants/by-key-hash/{hash}': {
      get: {
        ...authed,
        summary: "The tenant of an active rule-store key, by the key's SHA-256 (the page hashes a pasted key in the browser and sends only this)",
        parameters: [{ name: 'hash', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{64}$' } }],
        responses: { 200: { description: 'the tenant', ...json({ type: 'object', required: ['tenant'], properties: { tenant: { type: 'string' } } }) }, ...errors(400, 401, 403, 404) },
      },
    },
  };
}
