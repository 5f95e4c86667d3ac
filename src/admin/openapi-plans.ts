// The OpenAPI paths and schemas of plans and their assignments (plan-handlers.ts).
const json = (schema: object) => ({ content: { 'application/json': { schema } } });
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const id = { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9._~@+-]+$' };
const path = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: id });

export const planSchemas = {
  PlanLimit: {
    type: 'object',
    required: ['plan', 'scope', 'target', 'rule', 'updatedAt'],
    properties: { plan: id, scope: { enum: ['route', 'limit', 'global'] }, target: { type: 'string', description: 'a route id, a limit id, or * (global)' }, rule: ref('Rule'), updatedAt: { type: 'string', format: 'date-time' } },
  },
  StoredPlan: { type: 'object', required: ['name', 'createdAt', 'limits'], properties: { name: id, createdAt: { type: 'string', format: 'date-time' }, limits: { type: 'array', items: ref('PlanLimit') } } },
  PlanAssignment: {
    type: 'object',
    required: ['subject', 'id', 'plan', 'updatedAt'],
    properties: { subject: { enum: ['tenant', 'key'] }, id, plan: id, updatedAt: { type: 'string', format: 'date-time' } },
  },
};

/** `errors(...codes)` from openapi.ts, so the error answers read the same everywhere. */
export function planPaths(errors: (...codes: number[]) => object, authed: object): object {
  const name = path('name', 'the plan');
  const limitWrite = (summary: string) => ({
    put: { ...authed, summary, requestBody: { required: true, ...json(ref('Rule')) }, responses: { 200: { description: 'stored', ...json(ref('PlanLimit')) }, ...errors(400, 401, 403, 404, 413, 503) } },
    delete: { ...authed, summary: 'Delete that limit of the plan', responses: { 204: { description: 'deleted' }, ...errors(400, 401, 403, 404, 503) } },
  });
  return {
    '/plans': {
      get: { ...authed, summary: 'List plans with their limits', responses: { 200: { description: 'plans', ...json({ type: 'object', properties: { plans: { type: 'array', items: ref('StoredPlan') } } }) }, ...errors(401, 403, 503) } },
      post: {
        ...authed,
        summary: 'Create a plan (no limits yet); 409 ERR_PLAN_EXISTS when the name is taken',
        requestBody: { required: true, ...json({ type: 'object', required: ['name'], additionalProperties: false, properties: { name: id } }) },
        responses: { 201: { description: 'created', ...json(ref('StoredPlan')) }, ...errors(400, 401, 403, 409, 413, 503) },
      },
    },
    '/plans/{name}': {
      parameters: [name],
      get: { ...authed, summary: 'One plan with its limits', responses: { 200: { description: 'the plan', ...json(ref('StoredPlan')) }, ...errors(400, 401, 403, 404, 503) } },
      delete: { ...authed, summary: 'Delete a plan; 409 ERR_PLAN_IN_USE while a tenant or key is on it', responses: { 204: { description: 'deleted' }, ...errors(400, 401, 403, 404, 409, 503) } },
    },
    '/plans/{name}/limits/global': { parameters: [name], ...limitWrite("Create or replace the plan's limit for every route (seen by every instance within a second, one row whatever the number of tenants)") },
    '/plans/{name}/limits/{scope}/{id}': {
      parameters: [name, { name: 'scope', in: 'path', required: true, schema: { enum: ['route', 'limit'] } }, path('id', 'a route id or a limit id')],
      ...limitWrite("Create or replace the plan's limit for one route or one limit id"),
    },
    '/plans/{name}/assignments': {
      parameters: [name],
      get: { ...authed, summary: 'The tenants and keys on the plan', responses: { 200: { description: 'assignments', ...json({ type: 'object', properties: { assignments: { type: 'array', items: ref('PlanAssignment') } } }) }, ...errors(400, 401, 403, 503) } },
    },
    '/assignments/{subject}/{id}': {
      parameters: [{ name: 'subject', in: 'path', required: true, schema: { enum: ['tenant', 'key'] } }, path('id', 'a tenant id or an API key id')],
      get: { ...authed, summary: 'The plan a tenant or key is on', responses: { 200: { description: 'assignment', ...json(ref('PlanAssignment')) }, ...errors(400, 401, 403, 404, 503) } },
      put: {
        ...authed,
        summary: 'Put the tenant or key on a plan (its buckets keep their state: docs/plans.md#bucket-state)',
        requestBody: { required: true, ...json({ type: 'object', required: ['plan'], additionalProperties: false, properties: { plan: id } }) },
        responses: { 200: { description: 'assigned', ...json(ref('PlanAssignment')) }, ...errors(400, 401, 403, 404, 413, 503) },
      },
      delete: { ...authed, summary: 'Take the tenant or key off its plan', responses: { 204: { description: 'unassigned' }, ...errors(400, 401, 403, 404, 503) } },
    },
  };
}
