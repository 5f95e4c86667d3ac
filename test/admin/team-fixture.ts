// An admin server over a given rule store (embedded or PostgreSQL), for the
// tests of tokens, roles and the audit log; `call` sends any token.
import { type AdminServer, startAdminServer } from '../../src/admin/server.js';
import { StoreEngine } from '../../src/limiter/engine.js';
import { silentLogger } from '../../src/rules/logger.js';
import { RuleCache } from '../../src/rules/rule-cache.js';
import type { RuleStore } from '../../src/rules/store.js';
import { MemoryStore } from '../../src/stores/memory-store.js';

export const BOOTSTRAP = 'team-bootstrap-token-0123456789';

export interface TeamAdmin {
  admin: AdminServer;
  cache: RuleCache;
  // biome-ignore lint/suspicious/noExplicitAny: tests read response fields directly
  call(method: string, path: string, options?: { body?: string | object; token?: string }): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startTeamAdmin(store: RuleStore, reload?: () => Promise<never>): Promise<TeamAdmin> {
  const cache = new RuleCache({ store, defaultRule: { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 }, logger: silentLogger });
  await cache.start();
  const engine = new StoreEngine(new MemoryStore());
  const admin = await startAdminServer({ listen: { port: 0 }, token: BOOTSTRAP, store, cache, engine, logger: silentLogger, reload });
  return {
    admin,
    cache,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? BOOTSTRAP}` };
      const body = typeof options.body === 'object' ? JSON.stringify(options.body) : options.body;
      const res = await fetch(`${admin.url}${path}`, { method, headers, body });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      await admin.close();
      await cache.close();
      await engine.close();
    },
  };
}
