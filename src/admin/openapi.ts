// The OpenAPI 3.1 description of the admin API. Rule schemas come from the one
// zod rule schema, so the document can never drift from what PUT accepts.
import { z } from 'zod';
import { SLUICE_ERRORS } from '../core/error-codes.js';
import { ruleSchema } from '../policies/rule.js';
import { overridePaths, storedOverrideSchema } from './openapi-overrides.js';
import { listPaths, listSchemas } from './openapi-lists.js';
import { planPaths, planSchemas } from './openapi-plans.js';
import { teamPaths, teamSchemas } from './openapi-team.js';

const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [String(code), { description: ERROR_TEXT[code] ?? 'error', ...json(ref('Error')) }]));
const ERROR_TEXT: Record<number, string> = {
  400: 'invalid input; `error.field` names the offending field',
  401: 'missing or wrong bearer token',
  403: "the token's role does not allow this (ERR_FORBIDDEN: read = GET only, write = rules, overrides, plans, lists, keys and buckets, admin = also tokens and reloads), or SLUICE_ADMIN_TOKEN is not set (ERR_ADMIN_DISABLED)",
  404: 'not found',
  409: 'conflict: the plan exists already (ERR_PLAN_EXISTS) or is still assigned (ERR_PLAN_IN_USE)',
  413: 'body over 64 KiB',
  503: 'the rule store is unreachable or did not answer within database.statementTimeoutMs; a write answered 503 is never applied after that answer',
};
const idParam = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string', maxLength: 64, pattern: '^([A-Za-z0-9._~@+-]+|\\*)$' } });
const target = [idParam('tenant', 'tenant id, or * for every tenant'), idParam('route', 'route id, or * for every route')];
const bucket = [idParam('tenant', 'tenant id'), idParam('route', 'route id')];
const authed = { security: [{ bearer: [] }] };

let cached: object | undefined;

export function openApiDocument(): object {
  cached ??= build();
  return cached;
}

function build(): object {
  return {
    openapi: '3.1.0',
    info: { title: 'Sluice admin API', version: '1', description: 'Rules, per-key overrides, API keys and buckets of a Sluice gateway. Every endpoint but /healthz, /readyz and /metrics needs Authorization: Bearer <token>: SLUICE_ADMIN_TOKEN (the admin token named bootstrap) or a named token, whose role allows it; every write is in the audit log (GET /audit).' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: schemas() },
    paths: paths(),
  };
}

function schemas(): object {
  const { $schema: _, ...rule } = z.toJSONSchema(ruleSchema, { target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    Rule: rule,
    StoredRule: { type: 'object', required: ['tenant', 'route', 'rule', 'updatedAt'], properties: { tenant: { type: 'string' }, route: { type: 'string' }, rule: ref('Rule'), updatedAt: { type: 'string', format: 'date-time' } } },
    StoredOverride: storedOverrideSchema,
    ...teamSchemas,
    ...planSchemas,
    ...listSchemas,
    KeyInfo: { type: 'object', required: ['id', 'tenant', 'createdAt'], properties: { id: { type: 'string' }, tenant: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' }, revokedAt: { type: 'string', format: 'date-time' } } },
    CreatedKey: { type: 'object', required: ['id', 'key', 'tenant', 'createdAt'], properties: { id: { type: 'string' }, key: { type: 'string', description: 'the clear key: shown once, never stored' }, tenant: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' } } },
    Error: { type: 'object', required: ['error'], properties: { error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string', enum: Object.keys(SLUICE_ERRORS) }, field: { type: 'string' }, message: { type: 'string' } } } } },
  };
}

function paths(): object {
  return {
  '/healthz': { get: { summary: 'The process is up', responses: { 200: { description: 'up' } } } },
  '/readyz': { get: { summary: 'Rules are loaded (from the store, or the last set while it is down)', responses: { 200: { description: 'ready', ...json({ type: 'object' }) }, 503: { description: 'not ready', ...json({ type: 'object' }) } } } },
  '/metrics': {
    get: {
      summary: 'Prometheus counters of the resilience layer (text exposition format); no tenant ids or keys',
      responses: { 200: { description: 'metrics', content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } } } },
    },
  },
  '/openapi.json': { get: { ...authed, summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1' }, ...errors(401, 403) } } },
  '/rules': {
    get: { ...authed, summary: 'List rules', parameters: [{ name: 'tenant', in: 'query', schema: { type: 'string' } }], responses: { 200: { description: 'rules', ...json({ type: 'object', properties: { rules: { type: 'array', items: ref('StoredRule') } } }) }, ...errors(400, 401, 403, 503) } },
  },
  '/rules/{tenant}/{route}': {
    parameters: target,
    get: { ...authed, summary: 'One rule', responses: { 200: { description: 'the rule', ...json(ref('StoredRule')) }, ...errors(400, 401, 403, 404, 503) } },
    put: { ...authed, summary: 'Create or replace a rule (seen by every instance within a second)', requestBody: { required: true, ...json(ref('Rule')) }, responses: { 200: { description: 'stored', ...json(ref('StoredRule')) }, ...errors(400, 401, 403, 413, 503) } },
    delete: { ...authed, summary: 'Delete a rule', responses: { 204: { description: 'deleted' }, ...errors(400, 401, 403, 404, 503) } },
  },
  '/keys': {
    get: { ...authed, summary: 'List API keys (never the keys themselves)', parameters: [{ name: 'tenant', in: 'query', schema: { type: 'string' } }], responses: { 200: { description: 'keys', ...json({ type: 'object', properties: { keys: { type: 'array', items: ref('KeyInfo') } } }) }, ...errors(400, 401, 403, 503) } },
    post: { ...authed, summary: 'Create an API key; the clear key is in this response only', requestBody: { required: true, ...json({ type: 'object', required: ['tenant'], additionalProperties: false, properties: { tenant: { type: 'string', maxLength: 64 } } }) }, responses: { 201: { description: 'created', ...json(ref('CreatedKey')) }, ...errors(400, 401, 403, 413, 503) } },
  },
  '/keys/{id}': {
    delete: { ...authed, summary: 'Revoke a key (stops resolving on every instance within a second)', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'revoked', ...json(ref('KeyInfo')) }, ...errors(400, 401, 403, 404, 503) } },
  },
  ...overridePaths(errors, authed),
  ...teamPaths(errors, authed),
  ...planPaths(errors, authed),
  ...listPaths(errors, authed),
  '/reload': {
    post: { ...authed, summary: 'Re-read the config file (like SIGHUP): routes, upstreams, limits, keys and header options change without dropping a request; an invalid file is refused (400 naming file:line) and the old config keeps serving', responses: { 200: { description: 'applied: the new hash, when, and changed fields that need a restart', ...json({ type: 'object' }) }, ...errors(400, 401, 403, 404) } },
  },
  '/ui/api/overview': overviewPath(),
  '/explain': explainPath(),
  '/tenants/{tenant}/usage': tenantUsagePath(),
  ...blockPaths(),
  '/notifications': {
    get: { ...authed, summary: "This instance's limit threshold events (docs/notifications.md): how many wait to be sent or retried, and the last ones sent, failed or dropped, newest first (tenant, limit, route, threshold, attempts, the receiver's last status or why none); never the URL or the secret", responses: { 200: { description: 'notifications', ...json({ type: 'object', required: ['pending', 'recent'], properties: { pending: { type: 'integer' }, recent: { type: 'array', items: { type: 'object' } } } }) }, ...errors(401, 403) } },
  },
  '/buckets/{tenant}/{route}': {
    parameters: bucket,
    get: { ...authed, summary: 'Inspect a bucket under its resolved rule: state, remaining, TTL, where it lives', responses: { 200: { description: 'bucket', ...json({ type: 'object' }) }, ...errors(400, 401, 403) } },
    delete: { ...authed, summary: 'Reset a bucket: the next request starts full', responses: { 204: { description: 'reset' }, ...errors(400, 401, 403) } },
  },
  };
}

/** GET /explain (src/admin/explain-handler.ts, docs/explain.md). */
function explainPath(): object {
  const query = (name: string, description: string, extra: object = {}) => ({ name, in: 'query', description, schema: { type: 'string' }, ...extra });
  const parameters = [
    query('method', 'the request method as sent (default GET)'),
    query('path', 'the request target: path and optional query', { required: true }),
    query('host', 'the Host header'),
    { ...query('header', "a request header, 'Name: value'; repeat for more"), schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true },
    query('ip', "the connecting peer's address (X-Forwarded-For is read only when it is a trusted proxy)"),
  ];
  return {
    get: { ...authed, summary: "What the gateway would do with a sample request, and why: the route that takes it and why each other does not, the tenant, each limit (applies, shadow, or skipped and why) with its key, rule and the rule's source, its bucket's Redis key and its state now (a peek: nothing is charged). Header values are never echoed", parameters, responses: { 200: { description: 'the explanation', ...json({ type: 'object', required: ['request', 'outcome', 'routes', 'identity', 'limits'] }) }, ...errors(400, 401, 403, 404) } },
  };
}

/** GET /tenants/{tenant}/usage (src/admin/usage-handler.ts, docs/tenant-usage.md). */
function tenantUsagePath(): object {
  const cell = { type: 'object', required: ['units', 'requests', 'refused'], properties: { units: { type: 'integer' }, requests: { type: 'integer' }, refused: { type: 'integer' } } };
  const limit = {
    type: 'object',
    required: ['id', 'global', 'keyedBy', 'routes'],
    properties: { id: { type: 'string' }, global: { type: 'boolean' }, keyedBy: { enum: ['tenant', 'tenant+ip'] }, routes: { type: 'array', items: { type: 'string' } }, rule: ref('Rule'), source: { type: 'object' }, bucket: { type: 'object' }, state: { type: 'object', description: 'remaining, limit, resetAfterMs, resetAt, retryAfterMs (a peek: nothing is charged); or error; absent for a tenant+ip limit' }, lastHour: cell, lastDay: cell },
  };
  const parameters = [{ name: 'tenant', in: 'path', required: true, schema: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9._~@+-]+$' } }];
  return {
    get: { ...authed, summary: "A tenant's limits: for each limit that counts its requests, its rule and the rule's source, what is left and when it resets, and what the tenant consumed over the last hour (twelve 5-minute buckets) and day (24 hours); scope cluster (Redis) or local (the memory store)", parameters, responses: { 200: { description: 'the usage', ...json({ type: 'object', required: ['tenant', 'at', 'scope', 'limits'], properties: { tenant: { type: 'string' }, at: { type: 'string', format: 'date-time' }, scope: { enum: ['cluster', 'local'] }, limits: { type: 'array', items: limit }, historyError: { type: 'string' } } }) }, ...errors(400, 401, 403, 404) } },
  };
}

/** The operator's page's data endpoint (src/dashboard/ui-routes.ts). */
function overviewPath(): object {
  return {
    get: { ...authed, summary: "The operator's page's data (docs/dashboard.md): cluster-wide traffic per route, the most limited tenants, each instance's mode and counters; scope cluster, or local with the reason when Redis is away", responses: { 200: { description: 'overview', ...json({ type: 'object', required: ['self', 'scope'], properties: { self: { type: 'string' }, scope: { type: 'string', enum: ['cluster', 'local'] }, scopeNote: { type: 'string' } } }) }, ...errors(401, 403, 404) } },
  };
}

/** The penalty box's blocks (src/admin/block-handlers.ts, docs/admin-api.md#penalty-blocks). */
function blockPaths(): object {
  const block = {
    type: 'object',
    required: ['id', 'blockedUntilMs', 'remainingMs'],
    properties: {
      id: { type: 'string', pattern: '^~h\\.[0-9a-f]{32}$', description: "SHA-256 of the block's penalty key (never the key: it may hold an address)" },
      tenant: { type: 'string', description: 'the tenant, when the bucket is keyed by one' },
      limit: { type: 'string', description: "the limit's id, when the bucket's name is it" },
      blockedUntilMs: { type: 'integer', description: 'when the block ends, ms since the epoch' },
      remainingMs: { type: 'integer', description: 'ms until then, at the time of the answer' },
    },
  };
  const limit = { name: 'limit', in: 'query', description: 'at most this many, soonest to end first (default 1000)', schema: { type: 'integer', minimum: 1, maximum: 10000 } };
  const id = { name: 'id', in: 'path', required: true, description: 'a block id as GET /blocks lists it', schema: { type: 'string', pattern: '^~h\\.[0-9a-f]{32}$' } };
  return {
    '/blocks': {
      get: { ...authed, summary: "The keys a limit's penalty box (`penalty:`) blocks now, across the cluster, soonest to end first, with the time left", parameters: [limit], responses: { 200: { description: 'blocks', ...json({ type: 'object', properties: { blocks: { type: 'array', items: block } } }) }, ...errors(400, 401, 403, 503) } },
    },
    '/blocks/{id}': {
      delete: { ...authed, summary: "Lift a block and forgive the key's offence level (audited, kind bucket); every instance sees it within a second", parameters: [id], responses: { 200: { description: 'lifted', ...json({ type: 'object', properties: { lifted: block } }) }, ...errors(400, 401, 403, 404, 503) } },
    },
  };
}
