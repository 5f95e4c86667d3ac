// An admin server on the embedded store, a rule cache and a memory-store engine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdminServer, type AdminServerOptions, startAdminServer } from '../../src/admin/server.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { silentLogger } from '../../src/rules/logger.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { type AdminCall, adminCaller } from './team-fixture.js';

export const TOKEN = 'test-admin-token-0123456789';

export interface AdminFixture {
  admin: AdminServer;
  store: EmbeddedRuleStore;
  cache: RuleCache;
  engine: StoreEngine;
  /** fetch against the admin API with the token (unless `token: null`). */
  call: AdminCall;
  close(): Promise<void>;
}

/** `null`: no admin token configured; `metricsAccess`: admin.metrics (default open on the admin listener). */
export async function startAdminFixture(configured: string | null = TOKEN, options: Pick<AdminServerOptions, 'metricsAccess'> = {}): Promise<AdminFixture> {
  const token = configured ?? undefined;
  const dir = mkdtempSync(join(tmpdir(), 'sluice-admin-'));
  const store = new EmbeddedRuleStore({ dataDir: dir });
  const cache = new RuleCache({ store, defaultRule: { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 }, logger: silentLogger });
  await cache.start();
  const engine = new StoreEngine(new MemoryStore());
  const admin = await startAdminServer({ listen: { port: 0 }, token, store, cache, engine, logger: silentLogger, ...options });
  return {
    admin,
    store,
    cache,
    engine,
    call: adminCaller(admin.url, token),
    async close() {
      await admin.close();
      await cache.close();
      await engine.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
