// The admin API's plans (docs/plans.md, docs/admin-api.md#plans): /plans,
// /plans/{name}, /plans/{name}/limits/{route|limit}/{id} or .../limits/global,
// /plans/{name}/assignments, and /assignments/{tenant|key}/{id} to put a tenant
// or an API key on a plan. Every input is validated before the store is
// touched; a bad one is a 400 naming the field.
import type { IncomingMessage } from 'node:http';
import { SluiceError } from '../core/errors.js';
import { parseRule } from '../policies/rule.js';
import { assertPlanName, assertPlanScope, assertPlanSubject, assertSubjectId, type PlanScope, planNotFound, planTarget } from '../rules/plans.js';
import type { AdminDeps, Reply } from './handlers.js';
import { asObject, readJson } from '../dashboard/http-util.js';

type Allow = (...methods: string[]) => void;

/** `parts` starts with `plans` or `assignments`. */
export async function routePlans(deps: AdminDeps, req: IncomingMessage, parts: string[], allow: Allow): Promise<Reply> {
  const method = req.method ?? 'GET';
  if (parts[0] === 'assignments') return routeAssignment(deps, req, parts, allow);
  const [, name, what] = parts;
  if (name === undefined) {
    allow('GET', 'POST');
    return method === 'GET' ? { status: 200, body: { plans: await deps.store.plans.list() } } : createPlan(deps, await readJson(req));
  }
  if (what === undefined) {
    allow('GET', 'DELETE');
    return method === 'GET' ? getPlan(deps, name) : deletePlan(deps, name);
  }
  if (what === 'assignments' && parts.length === 3) {
    allow('GET');
    assertPlanName(name, 'name');
    return { status: 200, body: { assignments: await deps.store.plans.listAssignments({ plan: name }) } };
  }
  if (what === 'limits' && (parts.length === 4 || parts.length === 5)) {
    allow('PUT', 'DELETE');
    const [scope, target] = limitTarget(parts);
    if (method === 'DELETE') return deleteLimit(deps, name, scope, target);
    return putLimit(deps, name, scope, target, await readJson(req));
  }
  throw new SluiceError('ERR_NOT_FOUND', `no endpoint /${parts.join('/')}; see GET /openapi.json`);
}

/** `limits/global`, or `limits/route/{id}` and `limits/limit/{id}`. */
export function limitTarget(parts: readonly string[]): [PlanScope, string] {
  const scope = parts[3];
  assertPlanScope(scope, 'scope');
  if (scope === 'global') {
    if (parts.length !== 4) throw new SluiceError('ERR_BAD_REQUEST', 'a global limit has no id: use /plans/{name}/limits/global', 'target');
    return [scope, planTarget(scope, undefined)];
  }
  if (parts.length !== 5) throw new SluiceError('ERR_BAD_REQUEST', `a ${scope} limit needs its id: /plans/{name}/limits/${scope}/{id}`, 'target');
  return [scope, planTarget(scope, parts[4], 'target')];
}

function onlyFields(input: Record<string, unknown>, allowed: readonly string[]): void {
  const unknown = Object.keys(input).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) throw new SluiceError('ERR_BAD_REQUEST', `unknown field(s) ${unknown.join(', ')}`, `body.${unknown[0]}`);
}

async function createPlan(deps: AdminDeps, body: unknown): Promise<Reply> {
  const input = asObject(body);
  onlyFields(input, ['name']);
  assertPlanName(input.name, 'body.name');
  return { status: 201, body: await deps.store.plans.create(input.name) };
}

async function getPlan(deps: AdminDeps, name: string): Promise<Reply> {
  assertPlanName(name, 'name');
  const plan = await deps.store.plans.get(name);
  if (!plan) throw planNotFound(name);
  return { status: 200, body: plan };
}

async function deletePlan(deps: AdminDeps, name: string): Promise<Reply> {
  assertPlanName(name, 'name');
  if (!(await deps.store.plans.delete(name))) throw planNotFound(name);
  return { status: 204 };
}

async function putLimit(deps: AdminDeps, name: string, scope: PlanScope, target: string, body: unknown): Promise<Reply> {
  assertPlanName(name, 'name');
  const rule = parseRule(asObject(body), 'body');
  return { status: 200, body: await deps.store.plans.putLimit(name, scope, target, rule) };
}

async function deleteLimit(deps: AdminDeps, name: string, scope: PlanScope, target: string): Promise<Reply> {
  assertPlanName(name, 'name');
  if (!(await deps.store.plans.deleteLimit(name, scope, target))) throw new SluiceError('ERR_NOT_FOUND', `plan ${name} has no ${scope} limit ${target}`);
  return { status: 204 };
}

/** GET / PUT {"plan": NAME} / DELETE /assignments/{tenant|key}/{id}. */
async function routeAssignment(deps: AdminDeps, req: IncomingMessage, parts: string[], allow: Allow): Promise<Reply> {
  if (parts.length !== 3) throw new SluiceError('ERR_NOT_FOUND', 'use /assignments/tenant/{tenant} or /assignments/key/{keyId}');
  allow('GET', 'PUT', 'DELETE');
  const [, subject, id] = parts;
  assertPlanSubject(subject, 'subject');
  assertSubjectId(subject, id, subject === 'tenant' ? 'tenant' : 'keyId');
  const { plans } = deps.store;
  if (req.method === 'GET') {
    const found = await plans.getAssignment(subject, id);
    if (!found) throw new SluiceError('ERR_NOT_FOUND', `${subject} ${id} is on no plan`);
    return { status: 200, body: found };
  }
  if (req.method === 'DELETE') {
    if (!(await plans.unassign(subject, id))) throw new SluiceError('ERR_NOT_FOUND', `${subject} ${id} is on no plan`);
    return { status: 204 };
  }
  const input = asObject(await readJson(req));
  onlyFields(input, ['plan']);
  assertPlanName(input.plan, 'body.plan');
  return { status: 200, body: await plans.assign(subject, id, input.plan) };
}
