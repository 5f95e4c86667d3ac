// 100,000 rules: load time and memory of the rule cache (from PostgreSQL and from
// the embedded store). Prints the figures; asserts only generous bounds, since
// the machine is small and shared.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { silentLogger } from '../../src/rules/logger.js';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import type { RuleStore } from '../../src/rules/store.js';
import { type PostgresHost, postgresForFile } from '../helpers/shared-servers.js';
import { createDatabase, sql } from '../helpers/postgres-db.js';

const COUNT = 100_000;
const defaultRule = { policy: 'token_bucket' as const, capacity: 20, refillPerSecond: 10 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

async function measure(name: string, store: RuleStore): Promise<void> {
  const cache = new RuleCache({ store, defaultRule, logger: silentLogger, refreshIntervalMs: 3_600_000 });
  const heapBefore = heapUsed();
  const started = performance.now();
  await cache.start();
  const ms = performance.now() - started;
  const mb = (heapUsed() - heapBefore) / 1024 / 1024;
  console.log(`${name}: ${cache.status().rules} rules loaded in ${ms.toFixed(0)} ms, cache holds ${mb.toFixed(1)} MB of heap`);
  assert.equal(cache.status().rules, COUNT);
  assert.equal(cache.resolve('tenant-77777', 'route-7').match, 'tenant-route');
  // Generous bounds (the targets are < 2 s and < 100 MB on a quiet machine).
  assert.ok(ms < 20_000, `${ms} ms`);
  assert.ok(mb < 300, `${mb} MB`);
  await cache.close();
}

describe('100,000 rules', () => {
  let server: PostgresHost;
  const dirs: string[] = [];
  before(async () => {
    server = await postgresForFile();
  });
  after(async () => {
    await server?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('load from PostgreSQL fast and fit in memory', async () => {
    const url = await createDatabase(server);
    const store = new PostgresRuleStore({ connectionString: url });
    await store.listRules(); // migrates
    await sql(url, 'ALTER TABLE rate_limit_rule DISABLE TRIGGER rate_limit_rule_notify');
    await sql(
      url,
      `INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second)
       SELECT 'tenant-' || i, 'route-' || (i % 10), 'token_bucket', 100 + i % 50, 10 FROM generate_series(1, ${COUNT}) AS i`,
    );
    await measure('postgres', store);
    await store.close();
  });

  it('load from the embedded store fast and fit in memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-100k-'));
    dirs.push(dir);
    const store = new EmbeddedRuleStore({ dataDir: dir });
    // Bulk-load through SQLite directly: 100k API writes would measure the writer, not the load.
    const Database = (await import('better-sqlite3')).default;
    await store.close();
    const db = new Database(join(dir, 'rules.sqlite'));
    const insert = db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at) VALUES (?, ?, 'token_bucket', ?, 10, '{}', 0, ?)");
    const now = new Date().toISOString();
    db.transaction(() => {
      for (let i = 1; i <= COUNT; i++) insert.run(`tenant-${i}`, `route-${i % 10}`, 100 + (i % 50), now);
    })();
    db.close();
    const reopened = new EmbeddedRuleStore({ dataDir: dir });
    await measure('embedded', reopened);
    await reopened.close();
  });
});
