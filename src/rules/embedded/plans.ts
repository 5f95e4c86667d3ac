// The embedded store's plans (plan, plan_limit, plan_assignment in the SQLite
// file: schema.ts, mirroring migrations/008): written in process, each
// change announced to the store's watchers after the write, as rules are.
import type { Rule } from '../../policies/rule.js';
import type { SqliteAccess } from './overrides.js';
import {
  type AssignmentRow,
  ASSIGNMENT_COLUMNS,
  assertPlanName,
  assertSubjectId,
  assignmentFromRow,
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

type PlanRow = { name: string; created_at: string };

export class EmbeddedPlanStore implements PlanStore {
  constructor(private readonly access: SqliteAccess) {}

  private limits(plan?: string): PlanLimit[] {
    const { db, logger, location } = this.access;
    const rows =
      plan === undefined
        ? db.prepare(`SELECT ${LIMIT_COLUMNS} FROM plan_limit ORDER BY plan_name, scope, target`).all()
        : db.prepare(`SELECT ${LIMIT_COLUMNS} FROM plan_limit WHERE plan_name = ? ORDER BY scope, target`).all(plan);
    return (rows as PlanLimitRow[]).flatMap((row) => limitFromRow(row, logger, location));
  }

  async list(): Promise<StoredPlan[]> {
    return plansFrom(this.access.db.prepare('SELECT name, created_at FROM plan ORDER BY name').all() as PlanRow[], this.limits());
  }

  async get(name: string): Promise<StoredPlan | undefined> {
    assertPlanName(name);
    return plansFrom(this.access.db.prepare('SELECT name, created_at FROM plan WHERE name = ?').all(name) as PlanRow[], this.limits(name))[0];
  }

  async create(name: string): Promise<StoredPlan> {
    assertPlanName(name, 'body.name');
    const createdAt = new Date().toISOString();
    const plan = this.access.change(() => {
      const inserted = this.access.db.prepare('INSERT INTO plan (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, createdAt).changes === 1;
      if (!inserted) throw planExists(name);
      return { name, createdAt, limits: [] };
    });
    this.access.emit({ kind: 'plan', plan: name });
    return plan;
  }

  async delete(name: string): Promise<boolean> {
    assertPlanName(name);
    const { db } = this.access;
    const deleted = this.access.change(() => {
      const used = (db.prepare('SELECT count(*) AS n FROM plan_assignment WHERE plan_name = ?').get(name) as { n: number }).n;
      if (used > 0) throw planInUse(name, used);
      db.prepare('DELETE FROM plan_limit WHERE plan_name = ?').run(name);
      return db.prepare('DELETE FROM plan WHERE name = ?').run(name).changes === 1;
    });
    if (deleted) this.access.emit({ kind: 'plan', plan: name });
    return deleted;
  }

  async putLimit(plan: string, scope: PlanScope, target: string, rule: Rule): Promise<PlanLimit> {
    assertPlanName(plan);
    const to = planTarget(scope, target);
    const stored = storedRule(rule);
    const updatedAt = new Date().toISOString();
    const limit = this.access.change(() => {
      const written = this.access.db
        .prepare(
          `INSERT INTO plan_limit (plan_name, scope, target, rule, updated_at) SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM plan WHERE name = ?)
           ON CONFLICT (plan_name, scope, target) DO UPDATE SET rule = excluded.rule, updated_at = excluded.updated_at`,
        )
        .run(plan, scope, to, JSON.stringify(stored), updatedAt, plan).changes;
      if (written !== 1) throw planNotFound(plan);
      return { plan, scope, target: to, rule: stored, updatedAt };
    });
    this.access.emit({ kind: 'plan', plan });
    return limit;
  }

  async deleteLimit(plan: string, scope: PlanScope, target: string): Promise<boolean> {
    assertPlanName(plan);
    const to = planTarget(scope, target);
    const deleted = this.access.change(
      () => this.access.db.prepare('DELETE FROM plan_limit WHERE plan_name = ? AND scope = ? AND target = ?').run(plan, scope, to).changes === 1,
    );
    if (deleted) this.access.emit({ kind: 'plan', plan });
    return deleted;
  }

  async assign(subject: PlanSubject, id: string, plan: string): Promise<PlanAssignment> {
    assertSubjectId(subject, id);
    assertPlanName(plan, 'body.plan');
    const updatedAt = new Date().toISOString();
    const assignment = this.access.change(() => {
      const written = this.access.db
        .prepare(
          `INSERT INTO plan_assignment (subject, subject_id, plan_name, updated_at) SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM plan WHERE name = ?)
           ON CONFLICT (subject, subject_id) DO UPDATE SET plan_name = excluded.plan_name, updated_at = excluded.updated_at`,
        )
        .run(subject, id, plan, updatedAt, plan).changes;
      if (written !== 1) throw planNotFound(plan);
      return { subject, id, plan, updatedAt };
    });
    this.access.emit({ kind: 'assignment', subject, id });
    return assignment;
  }

  async unassign(subject: PlanSubject, id: string): Promise<boolean> {
    assertSubjectId(subject, id);
    const deleted = this.access.change(() => this.access.db.prepare('DELETE FROM plan_assignment WHERE subject = ? AND subject_id = ?').run(subject, id).changes === 1);
    if (deleted) this.access.emit({ kind: 'assignment', subject, id });
    return deleted;
  }

  async listAssignments(filter: { plan?: string } = {}): Promise<PlanAssignment[]> {
    const { db } = this.access;
    if (filter.plan !== undefined) assertPlanName(filter.plan);
    const rows =
      filter.plan === undefined
        ? db.prepare(`SELECT ${ASSIGNMENT_COLUMNS} FROM plan_assignment ORDER BY subject, subject_id`).all()
        : db.prepare(`SELECT ${ASSIGNMENT_COLUMNS} FROM plan_assignment WHERE plan_name = ? ORDER BY subject, subject_id`).all(filter.plan);
    return (rows as AssignmentRow[]).map(assignmentFromRow);
  }

  async getAssignment(subject: PlanSubject, id: string): Promise<PlanAssignment | undefined> {
    assertSubjectId(subject, id);
    const row = this.access.db.prepare(`SELECT ${ASSIGNMENT_COLUMNS} FROM plan_assignment WHERE subject = ? AND subject_id = ?`).get(subject, id) as AssignmentRow | undefined;
    return row ? assignmentFromRow(row) : undefined;
  }
}
