// Plans (docs/plans.md): a named set of limits, and which plan a tenant or an
// API key is on. A plan's limit applies to one route, to one limit id (a route's
// `limits:` entry), or to every route (global); precedence is resolved in
// plan-set.ts. Both stores keep a plan's limit as one row and an assignment as
// one row, so changing a plan never touches a row per tenant. Ids are checked
// here, where they enter a store; a rule is parsed at the boundary (parseRule)
// and again on every read, since a database can hold anything.
import { SluiceError } from '../core/errors.js';
import { assertValidId } from '../core/ids.js';
import { parseRule, type Rule } from '../policies/rule.js';
import { assertTenantId } from './anonymous-tenant.js';
import { assertValidKeyId } from './keys.js';
import { errorMessage, type RulesLogger } from './logger.js';
import { asStored } from './rule-columns.js';

/** The columns both stores read a plan's limits and assignments by (limitFromRow, assignmentFromRow). */
export const LIMIT_COLUMNS = 'plan_name, scope, target, rule, updated_at';
export const ASSIGNMENT_COLUMNS = 'subject, subject_id, plan_name, updated_at';

export const PLAN_SCOPES = ['route', 'limit', 'global'] as const;
export type PlanScope = (typeof PLAN_SCOPES)[number];
export const PLAN_SUBJECTS = ['tenant', 'key'] as const;
export type PlanSubject = (typeof PLAN_SUBJECTS)[number];
/** A global limit's target: it applies to every route. */
export const GLOBAL_TARGET = '*';

export interface PlanLimit {
  plan: string;
  scope: PlanScope;
  /** A route id (scope route), a limit id (scope limit), or `*` (global). */
  target: string;
  rule: Rule;
  updatedAt: string; // ISO timestamp
}

export interface StoredPlan {
  name: string;
  createdAt: string; // ISO timestamp
  limits: PlanLimit[];
}

export interface PlanAssignment {
  subject: PlanSubject;
  /** A tenant id or an API key's id. */
  id: string;
  plan: string;
  updatedAt: string; // ISO timestamp
}

export interface PlanStore {
  list(): Promise<StoredPlan[]>;
  get(name: string): Promise<StoredPlan | undefined>;
  /** A new plan with no limits; ERR_PLAN_EXISTS when the name is taken. */
  create(name: string): Promise<StoredPlan>;
  /** Whether there was a plan to delete; ERR_PLAN_IN_USE while a tenant or key is on it. */
  delete(name: string): Promise<boolean>;
  /** Inserts or replaces one limit of the plan; ERR_NOT_FOUND when there is no such plan. */
  putLimit(plan: string, scope: PlanScope, target: string, rule: Rule): Promise<PlanLimit>;
  deleteLimit(plan: string, scope: PlanScope, target: string): Promise<boolean>;
  /** Puts the tenant or key on the plan (replacing its previous one); ERR_NOT_FOUND when there is no such plan. */
  assign(subject: PlanSubject, id: string, plan: string): Promise<PlanAssignment>;
  /** Whether the subject was on a plan. */
  unassign(subject: PlanSubject, id: string): Promise<boolean>;
  /** Every assignment (the cache's full load), or one plan's. */
  listAssignments(filter?: { plan?: string }): Promise<PlanAssignment[]>;
  getAssignment(subject: PlanSubject, id: string): Promise<PlanAssignment | undefined>;
}

export function assertPlanName(name: unknown, field = 'plan'): asserts name is string {
  assertValidId(name, field);
}

export function assertPlanScope(scope: unknown, field = 'scope'): asserts scope is PlanScope {
  if (!PLAN_SCOPES.includes(scope as PlanScope)) throw new SluiceError('ERR_BAD_REQUEST', `must be one of ${PLAN_SCOPES.join(', ')}`, field);
}

/** The plan limit's target for its scope: `*` for global, else a route or limit id. */
export function planTarget(scope: PlanScope, target: unknown, field = 'target'): string {
  if (scope === 'global') {
    if (target !== undefined && target !== GLOBAL_TARGET) throw new SluiceError('ERR_BAD_REQUEST', 'a global limit has no target (or `*`)', field);
    return GLOBAL_TARGET;
  }
  assertValidId(target, field);
  return target;
}

export function assertPlanSubject(subject: unknown, field = 'subject'): asserts subject is PlanSubject {
  if (!PLAN_SUBJECTS.includes(subject as PlanSubject)) throw new SluiceError('ERR_BAD_REQUEST', `must be one of ${PLAN_SUBJECTS.join(', ')}`, field);
}

/** A tenant id (never an anonymous `~…` one) or a key id. */
export function assertSubjectId(subject: PlanSubject, id: unknown, field = 'id'): asserts id is string {
  if (subject === 'tenant') assertTenantId(id, field);
  else assertValidKeyId(id, field);
}

export const planExists = (name: string): SluiceError => new SluiceError('ERR_PLAN_EXISTS', `a plan named ${name} exists already`, 'body.name');
export const planInUse = (name: string, count: number): SluiceError =>
  new SluiceError('ERR_PLAN_IN_USE', `plan ${name} is still assigned to ${count} tenant(s) or key(s); move them to another plan first`);
export const planNotFound = (name: string): SluiceError => new SluiceError('ERR_NOT_FOUND', `no plan ${name}`);

// Rows as either driver returns them (PostgreSQL: JSONB and Dates; SQLite: text).
export interface PlanLimitRow {
  plan_name: string;
  scope: string;
  target: string;
  rule: Record<string, unknown> | string;
  updated_at: Date | string;
}

export interface AssignmentRow {
  subject: string;
  subject_id: string;
  plan_name: string;
  updated_at: Date | string;
}

export const iso = (time: Date | string): string => (typeof time === 'string' ? time : time.toISOString());

/** A plan_limit row, parsed; one that fails is logged and skipped, never served. */
export function limitFromRow(row: PlanLimitRow, logger: RulesLogger, location: string): PlanLimit[] {
  try {
    const input = typeof row.rule === 'string' ? (JSON.parse(row.rule) as unknown) : row.rule;
    assertPlanScope(row.scope);
    const rule = parseRule(input, `plan_limit[${row.plan_name}/${row.scope}/${row.target}]`);
    return [{ plan: row.plan_name, scope: row.scope, target: row.target, rule, updatedAt: iso(row.updated_at) }];
  } catch (error) {
    logger.error({ err: errorMessage(error), store: location }, 'skipping an invalid plan limit row');
    return [];
  }
}

export function assignmentFromRow(row: AssignmentRow): PlanAssignment {
  return { subject: row.subject as PlanSubject, id: row.subject_id, plan: row.plan_name, updatedAt: iso(row.updated_at) };
}

/** The rule as a store keeps it, for a write's answer. */
export const storedRule = (rule: Rule): Rule => asStored(rule);

/** Plans with their limits, from the two listings, in name order. */
export function plansFrom(rows: readonly { name: string; created_at: Date | string }[], limits: readonly PlanLimit[]): StoredPlan[] {
  const byPlan = new Map<string, PlanLimit[]>();
  for (const limit of limits) byPlan.set(limit.plan, [...(byPlan.get(limit.plan) ?? []), limit]);
  return rows.map((row) => ({ name: row.name, createdAt: iso(row.created_at), limits: byPlan.get(row.name) ?? [] }));
}
