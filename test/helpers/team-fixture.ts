// An admin server over a given rule store (embedded or PostgreSQL), for the
// tests of tokens, roles and the audit log; `call` sends any token.
import { type AdminServer, type AdminServerOptions, startAdminServer } from '../../src/admin/server.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { silentLogger } from '../../src/rules/logger.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import type { RuleStore } from '../../src/rules/store.js';
import { MemoryStore } from '../../src/stores/memory-store.js';

export const BOOTSTRAP = 'team-bootstrap-token-0123456789';

export interface TeamAdmin {
  admin: AdminServer;
  cache: RuleCache;
  call: AdminCall;
  close(): Promise<void>;
}

/** `token: null` sends none; otherwise the given token, else `token`. */
// biome-ignore lint/suspicious/noExplicitAny: tests read response fields directly
export type AdminCall = (method: string, path: string, options?: { body?: string | object; token?: string | null; headers?: Record<string, string> }) => Promise<{ status: number; body: any }>;

/** fetch against an admin API with a bearer token, the body as JSON. */
export function adminCaller(url: string, token: string | undefined): AdminCall {
  return async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const auth = options.token === undefined ? token : options.token;
    if (auth !== null && auth !== undefined) headers.authorization = `Bearer ${auth}`;
    const body = typeof options.body === 'object' ? JSON.stringify(options.body) : options.body;
    const res = await fetch(`${url}${path}`, { method, headers, body });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
}

export async function startTeamAdmin(store: RuleStore, reload?: AdminServerOptions['reload']): Promise<TeamAdmin> {
  const cache = new RuleCache({ store, defaultRule: { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 }, logger: silentLogger });
  await cache.start();
  const engine = new StoreEngine(new MemoryStore());
  const admin = await startAdminServer({ listen: { port: 0 }, token: BOOTSTRAP, store, cache, engine, logger: silentLogger, reload });
  return {
    admin,
    cache,
    call: adminCaller(admin.url, BOOTSTRAP),
    async close() {
      await admin.close();
      await cache.close();
      await engine.close();
    },
  };
}
