// The PostgreSQL store's plans (plan, plan_limit, plan_assignment:
// migrations/008): reads and writes go through the store's bounded `query` and
// deadline-carrying `write`, as overrides do. Each write is one statement, so a
// refusal (no such plan, a plan still in use) is decided inside it, never
// between two statements another writer could slip between.
import type { Rule } from '../../policies/rule.js';
import type { PgAccess } from './overrides.js';
import {
  type AssignmentRow,
  ASSIGNMENT_COLUMNS,
  assertPlanName,
  assertSubjectId,
  assignmentFromRow,
  iso,
  LIMIT_COLUMNS,
  limitFromRow,
  type PlanAssignment,
  type PlanLimit,
  type PlanLimitRow,
  type PlanScope,
  type PlanStore,
  type PlanSubject,
  planExists,
  planInUse,
  planNotFound,
  plansFrom,
  planTarget,
  type StoredPlan,
  storedRule,
} from '../plans.js';


export class PgPlanStore implements PlanStore {
  constructor(private readonly db: PgAccess) {}

  private async limits(plan?: string): Promise<PlanLimit[]> {
    const where = plan === undefined ? '' : 'WHERE plan_name = $1';
    const result = await this.db.query<PlanLimitRow>(`SELECT ${LIMIT_COLUMNS} FROM plan_limit ${where} ORDER BY plan_name, scope, target`, plan === undefined ? [] : [plan]);
    return result.rows.flatMap((row) => limitFromRow(row, this.db.logger, this.db.location));
  }

  async list(): Promise<StoredPlan[]> {
    const [plans, limits] = await Promise.all([this.db.query<{ name: string; created_at: Date }>('SELECT name, created_at FROM plan ORDER BY name', []), this.limits()]);
    return plansFrom(plans.rows, limits);
  }

  async get(name: string): Promise<StoredPlan | undefined> {
    assertPlanName(name);
    const [plans, limits] = await Promise.all([this.db.query<{ name: string; created_at: Date }>('SELECT name, created_at FROM plan WHERE name = $1', [name]), this.limits(name)]);
    return plansFrom(plans.rows, limits)[0];
  }

  async create(name: string): Promise<StoredPlan> {
    assertPlanName(name, 'body.name');
    return this.db.write<{ created_at: Date }, StoredPlan>('INSERT INTO plan (name) VALUES ($1) ON CONFLICT (name) DO NOTHING RETURNING created_at', [name], (result) => {
      const row = result.rows[0];
      if (!row) throw planExists(name);
      return { name, createdAt: iso(row.created_at), limits: [] };
    });
  }

  async delete(name: string): Promise<boolean> {
    assertPlanName(name);
    const sql = `WITH used AS (SELECT count(*)::int AS n FROM plan_assignment WHERE plan_name = $1),
      gone AS (DELETE FROM plan WHERE name = $1 AND (SELECT n FROM used) = 0 RETURNING name)
      SELECT (SELECT n FROM used) AS used, (SELECT count(*)::int FROM gone) AS deleted`;
    return this.db.write<{ used: number; deleted: number }, boolean>(sql, [name], (result) => {
      const row = result.rows[0]!;
      if (row.used > 0) throw planInUse(name, row.used);
      return row.deleted === 1;
    });
  }

  async putLimit(plan: string, scope: PlanScope, target: string, rule: Rule): Promise<PlanLimit> {
    assertPlanName(plan);
    const to = planTarget(scope, target);
    const sql = `INSERT INTO plan_limit (plan_name, scope, target, rule) SELECT $1::varchar, $2::text, $3::varchar, $4::jsonb WHERE EXISTS (SELECT 1 FROM plan WHERE name = $1::varchar)
      ON CONFLICT (plan_name, scope, target) DO UPDATE SET rule = excluded.rule, updated_at = now() RETURNING updated_at`;
    const stored = storedRule(rule);
    return this.db.write<{ updated_at: Date }, PlanLimit>(sql, [plan, scope, to, JSON.stringify(stored)], (result) => {
      const row = result.rows[0];
      if (!row) throw planNotFound(plan);
      return { plan, scope, target: to, rule: stored, updatedAt: iso(row.updated_at) };
    });
  }

  async deleteLimit(plan: string, scope: PlanScope, target: string): Promise<boolean> {
    assertPlanName(plan);
    const to = planTarget(scope, target);
    return this.db.write('DELETE FROM plan_limit WHERE plan_name = $1 AND scope = $2 AND target = $3', [plan, scope, to], (result) => result.rowCount === 1);
  }

  async assign(subject: PlanSubject, id: string, plan: string): Promise<PlanAssignment> {
    assertSubjectId(subject, id);
    assertPlanName(plan, 'body.plan');
    const sql = `INSERT INTO plan_assignment (subject, subject_id, plan_name) SELECT $1::text, $2::varchar, $3::varchar WHERE EXISTS (SELECT 1 FROM plan WHERE name = $3::varchar)
      ON CONFLICT (subject, subject_id) DO UPDATE SET plan_name = excluded.plan_name, updated_at = now() RETURNING ${ASSIGNMENT_COLUMNS}`;
    return this.db.write<AssignmentRow, PlanAssignment>(sql, [subject, id, plan], (result) => {
      const row = result.rows[0];
      if (!row) throw planNotFound(plan);
      return assignmentFromRow(row);
    });
  }

  async unassign(subject: PlanSubject, id: string): Promise<boolean> {
    assertSubjectId(subject, id);
    return this.db.write('DELETE FROM plan_assignment WHERE subject = $1 AND subject_id = $2', [subject, id], (result) => result.rowCount === 1);
  }

  async listAssignments(filter: { plan?: string } = {}): Promise<PlanAssignment[]> {
    if (filter.plan !== undefined) assertPlanName(filter.plan);
    const where = filter.plan === undefined ? '' : 'WHERE plan_name = $1';
    const result = await this.db.query<AssignmentRow>(
      `SELECT ${ASSIGNMENT_COLUMNS} FROM plan_assignment ${where} ORDER BY subject, subject_id`,
      filter.plan === undefined ? [] : [filter.plan],
      this.db.fullLoadTimeoutMs,
    );
    return result.rows.map(assignmentFromRow);
  }

  async getAssignment(subject: PlanSubject, id: string): Promise<PlanAssignment | undefined> {
    assertSubjectId(subject, id);
    const result = await this.db.query<AssignmentRow>(`SELECT ${ASSIGNMENT_COLUMNS} FROM plan_assignment WHERE subject = $1 AND subject_id = $2`, [subject, id]);
    const row = result.rows[0];
    return row ? assignmentFromRow(row) : undefined;
  }
}
