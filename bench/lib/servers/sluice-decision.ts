// Sluice with its decision service in its own process, on Redis: the gateway
// (GET /orders to the upstream), forward-auth /decide and the gRPC
// RateLimitService, all deciding through one engine. Its URL reports the three
// addresses: `<decision URL>|<gRPC host:port>|<gateway URL>` (decisionAddresses).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Rule } from '../../../src/policies/rule.js';
import { fromDist } from '../built.js';
import { args, serve } from './serve.js';

// The built package (built.ts), as users run it.
const { startSluice } = await fromDist<typeof import('../../../src/app.js')>('app.js');
const { parseConfig } = await fromDist<typeof import('../../../src/decision-service/load-config.js')>('decision-service/load-config.js');

interface Args {
  upstream: string;
  redisUrl: string;
  /** The rule of every bucket: the gateway's default rule, and the descriptor's `sluice:` rule. */
  rule: Rule;
  /** The Redis call budget (default 5 ms); the accuracy runs use the accuracy bench's 100 ms. */
  deadlineMs?: number;
}

const { upstream, redisUrl, rule, deadlineMs } = args<Args>();
const dir = mkdtempSync(join(tmpdir(), 'sluice-bench-decision-'));
const envoyFile = join(dir, 'bench.yaml');
// One domain, one descriptor per API key: rate_limit is what Envoy is told; sluice: the rule it is decided by.
writeFileSync(envoyFile, JSON.stringify({ domain: 'bench', descriptors: [{ key: 'api_key', rate_limit: { unit: 'second', requests_per_unit: 1_000_000 }, sluice: rule }] }));
const config = parseConfig(
  JSON.stringify({
    listen: '127.0.0.1:0',
    routes: [{ id: 'create-order', path: '/orders', upstream, timeoutMs: 10_000 }],
    tenants: { header: 'X-Api-Key', unknownKeys: 'default-rule', keys: [] },
    defaultRule: rule,
    clientIp: { trustedProxies: ['127.0.0.1/32'] },
    store: { type: 'redis', url: redisUrl, ...(deadlineMs ? { deadlineMs } : {}) },
    decisionService: { grpcListen: '127.0.0.1:0', httpListen: '127.0.0.1:0', envoyConfig: envoyFile },
    log: { level: 'silent' },
  }),
  { source: 'bench' },
);
await serve(async () => {
  const app = await startSluice(config);
  return { url: `${app.decisionUrl}|${app.grpcAddress}|${app.url}`, close: () => app.close() };
});
