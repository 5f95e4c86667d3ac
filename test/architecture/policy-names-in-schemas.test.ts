// Adding a policy touches src/policies/ only (issue #39): the rule stores' schemas
// check a policy's form and never list the policies, so no migration is needed
// for a new one. Fails if a PostgreSQL migration from 010 on, or the layout the
// embedded schema makes, spells out a registered policy's name, or if a
// registered name has a form the schemas would refuse.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { POLICY_REGISTRY } from '../../src/policies/index.js';
import { migrateEmbedded } from '../../src/rules/embedded/schema.js';
import { silentLogger } from '../../src/rules/logger.js';
import { loadMigrations } from '../../src/rules/postgres/migrations.js';

/** The first migration written without the policies' names; the earlier ones listed them, and 010 dropped those CHECKs. */
const FIRST_WITHOUT_NAMES = 10;
const POLICY_NAMES = Object.keys(POLICY_REGISTRY);

const namesIn = (sql: string): string[] => POLICY_NAMES.filter((name) => new RegExp(`\\b${name}\\b`).test(sql));
const withoutComments = (sql: string): string => sql.replace(/--.*$/gm, '');
const laterMigrations = () => loadMigrations().filter((migration) => migration.version >= FIRST_WITHOUT_NAMES);

/** A new embedded database, migrated to the current layout. */
function embeddedLayout(): Database.Database {
  const db = new Database(':memory:');
  migrateEmbedded(db, silentLogger);
  return db;
}

describe('the rule stores name no policy', () => {
  it('in the PostgreSQL migrations from 010 on', () => {
    const later = laterMigrations();
    assert.ok(later.length > 0, 'migration 010 is there');
    for (const migration of later) assert.deepEqual(namesIn(withoutComments(migration.sql)), [], `migrations/${migration.version} names no policy`);
  });

  it('in the layout the embedded schema makes', () => {
    const db = embeddedLayout();
    try {
      const layout = (db.prepare('SELECT sql FROM sqlite_master WHERE sql IS NOT NULL').all() as { sql: string }[]).map((row) => row.sql).join('\n');
      assert.match(layout, /CREATE TABLE "?rate_limit_rule"?/);
      assert.deepEqual(namesIn(layout), []);
    } finally {
      db.close();
    }
  });

  it('and every registered name has the form both schemas check', () => {
    const forms = laterMigrations().flatMap((migration) => [...migration.sql.matchAll(/policy ~ '([^']+)'/g)].map((match) => new RegExp(match[1]!)));
    assert.ok(forms.length > 0, "010 checks the policy's form");
    const db = embeddedLayout();
    try {
      const insertRule = db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy) VALUES ('t', ?, ?)");
      const insertOverride = db.prepare("INSERT INTO limit_override (limit_id, selector, policy) VALUES ('l', ?, ?)");
      for (const name of POLICY_NAMES) {
        for (const form of forms) assert.match(name, form);
        assert.doesNotThrow(() => insertRule.run(name, name), name);
        assert.doesNotThrow(() => insertOverride.run(`tenant:${name}`, name), name);
      }
    } finally {
      db.close();
    }
  });
});
