// Plans at the design's scale: 100,000 tenants on 5 plans against 100,000
// per-tenant rules, both from the embedded store (bulk-loaded through SQLite,
// as test/rules/load-100k.int.test.ts does): the rule cache's start-up time and
// heap, and the cost of one lookup with 1,000, 10,000 and 100,000 tenants on
// plans (it must not grow with the number of tenants), beside one with
// 100,000 per-tenant rules.
//   npm run bench:plans -- [--tenants 100000] [--lookups 2000000] [--quick]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Database from 'better-sqlite3';
import { EmbeddedRuleStore } from '../src/rules/embedded/store.js';
import { silentLogger } from '../src/rules/logger.js';
import { RuleCache } from '../src/rules/cache/rule-cache.js';

const { values } = parseArgs({ options: { tenants: { type: 'string', default: '100000' }, lookups: { type: 'string', default: '2000000' }, quick: { type: 'boolean', default: false } } });
const TENANTS = Number(values.tenants);
const LOOKUPS = values.quick ? 200_000 : Number(values.lookups);
const PLANS = ['free', 'starter', 'pro', 'business', 'enterprise'];
const defaultRule = { policy: 'token_bucket' as const, capacity: 20, refillPerSecond: 10 };

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

/** A data dir whose SQLite file holds what `fill` writes, in one transaction. */
async function dataDir(fill: (db: Database.Database) => void): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-plans-'));
  await new EmbeddedRuleStore({ dataDir: dir }).close(); // migrates
  const db = new Database(join(dir, 'rules.sqlite'));
  db.transaction(() => fill(db))();
  db.close();
  return dir;
}

const onPlans = (tenants: number) => (db: Database.Database) => {
  const now = new Date().toISOString();
  PLANS.forEach((plan, i) => {
    db.prepare('INSERT INTO plan (name, created_at) VALUES (?, ?)').run(plan, now);
    const rule = (capacity: number) => JSON.stringify({ policy: 'token_bucket', capacity, refillPerSecond: capacity / 10 });
    db.prepare("INSERT INTO plan_limit (plan_name, scope, target, rule, updated_at) VALUES (?, 'global', '*', ?, ?)").run(plan, rule(10 ** (i + 1)), now);
    db.prepare("INSERT INTO plan_limit (plan_name, scope, target, rule, updated_at) VALUES (?, 'route', 'orders', ?, ?)").run(plan, rule(5 * 10 ** i), now);
  });
  const assign = db.prepare("INSERT INTO plan_assignment (subject, subject_id, plan_name, updated_at) VALUES ('tenant', ?, ?, ?)");
  for (let i = 0; i < tenants; i++) assign.run(`tenant-${i}`, PLANS[i % PLANS.length], now);
};

const perTenantRules = (tenants: number) => (db: Database.Database) => {
  const now = new Date().toISOString();
  const insert = db.prepare("INSERT INTO rate_limit_rule (tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at) VALUES (?, '*', 'token_bucket', ?, 10, '{}', 0, ?)");
  for (let i = 0; i < tenants; i++) insert.run(`tenant-${i}`, 100 + (i % 50), now);
};

interface Loaded {
  cache: RuleCache;
  store: EmbeddedRuleStore;
  ms: number;
  mb: number;
  dir: string;
}

async function load(dir: string): Promise<Loaded> {
  const store = new EmbeddedRuleStore({ dataDir: dir });
  const cache = new RuleCache({ store, defaultRule, logger: silentLogger, refreshIntervalMs: 3_600_000 });
  const before = heapUsed();
  const started = performance.now();
  await cache.start();
  const ms = performance.now() - started;
  return { cache, store, ms, mb: (heapUsed() - before) / 1024 / 1024, dir };
}

async function unload(loaded: Loaded): Promise<void> {
  await loaded.cache.close();
  await loaded.store.close();
  rmSync(loaded.dir, { recursive: true, force: true });
}

/** ns per resolve, over tenants spread across the whole set. */
function lookupNs(cache: RuleCache, tenants: number): number {
  const names = Array.from({ length: 1024 }, (_, i) => `tenant-${(i * 7919) % tenants}`);
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < LOOKUPS; i++) sink += cache.resolve(names[i & 1023]!, i & 1 ? 'orders' : 'search').version.length;
  const ns = Number(process.hrtime.bigint() - started) / LOOKUPS;
  if (sink === 0) throw new Error('unreachable');
  return ns;
}

const plans = await load(await dataDir(onPlans(TENANTS)));
console.log(`${TENANTS} tenants on ${PLANS.length} plans: ${plans.cache.status().assignments} assignments loaded in ${plans.ms.toFixed(0)} ms, cache holds ${plans.mb.toFixed(1)} MB of heap`);
await unload(plans);
const rules = await load(await dataDir(perTenantRules(TENANTS)));
console.log(`${TENANTS} per-tenant rules: ${rules.cache.status().rules} rules loaded in ${rules.ms.toFixed(0)} ms, cache holds ${rules.mb.toFixed(1)} MB of heap`);
console.log(`lookup with ${TENANTS} per-tenant rules (for comparison): ${lookupNs(rules.cache, TENANTS).toFixed(0)} ns per resolve (${LOOKUPS} lookups)`);
await unload(rules);
for (const tenants of [1_000, 10_000, TENANTS]) {
  const loaded = await load(await dataDir(onPlans(tenants)));
  console.log(`lookup with ${tenants} tenants on plans: ${lookupNs(loaded.cache, tenants).toFixed(0)} ns per resolve (${LOOKUPS} lookups)`);
  await unload(loaded);
}
