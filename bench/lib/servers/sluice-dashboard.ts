// Sluice with Redis, the rule store and the admin listener (which serves the
// dashboard) in its own process: the gateway the dashboard bench loads while a
// browser has the page open, or not.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fromDist } from '../built.js';
import { args, serve } from './serve.js';

// The built package (built.ts), as users run it.
const { startSluice } = await fromDist<typeof import('../../../src/app.js')>('app.js');
const { parseConfig } = await fromDist<typeof import('../../../src/decision-service/load-config.js')>('decision-service/load-config.js');

interface Args {
  upstream: string;
  redisUrl: string;
  adminPort: number;
  token: string;
}

const { upstream, redisUrl, adminPort, token } = args<Args>();
const dataDir = mkdtempSync(join(tmpdir(), 'sluice-bench-dashboard-'));
const config = parseConfig(
  JSON.stringify({
    listen: '127.0.0.1:0',
    admin: { listen: `127.0.0.1:${adminPort}`, token },
    dataDir,
    routes: [{ id: 'create-order', path: '/orders', upstream, timeoutMs: 10_000 }],
    tenants: { header: 'X-Api-Key', unknownKeys: 'default-rule', keys: [] },
    defaultRule: { policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000_000 },
    store: { type: 'redis', url: redisUrl },
    log: { level: 'silent' },
  }),
  { source: 'bench' },
);
await serve(async () => {
  const app = await startSluice(config, { ruleStore: true, admin: true });
  return {
    url: app.url,
    close: async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
});
