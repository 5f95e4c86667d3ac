// Which of src/'s files one refused request crosses, measured, not read: a
// gateway on a private redis-server with one tenant-keyed limit, warmed on one
// tenant, then V8's precise coverage (function call counts, reset at each take)
// around one request of a second tenant: its first refusal, decided by Redis's
// script, and its second, decided by the negative cache without a store call.
// Prints each file with the functions that ran, then the count, so the
// architecture's "a refused request crosses N files" stays a figure anyone can
// remake (docs/architecture.md).
// Usage: npx tsx scripts/request-walk.ts [--json]
import { Session } from 'node:inspector/promises';
import { call, startGateway, startUpstream } from '../test/helpers/gateway-support.js';
import { startRedis } from '../test/helpers/redis-server.js';

interface Coverage {
  result: { url: string; functions: { functionName: string; ranges: { count: number }[] }[] }[];
}

const config = (redisUrl: string) => `
store: { type: redis, url: ${redisUrl}, deadlineMs: 2000 }
tenants:
  keys:
    - { key: key-warm-0001, tenant: warm }
    - { key: key-walk-0001, tenant: walk }
routes:
  - id: search
    path: /search
    upstream: \${UP}
    limits:
      - { id: per-tenant, key: tenant, rule: { policy: token_bucket, capacity: 1, refillPerSecond: 0.001 } }
`;

const SRC = new URL('../src/', import.meta.url).href;

/** The src/ files whose functions ran since the last take, each with those functions. */
function filesRan(coverage: Coverage): { file: string; functions: string[] }[] {
  return coverage.result
    .filter((script) => script.url.startsWith(SRC))
    .map((script) => ({
      file: `src/${script.url.slice(SRC.length)}`,
      functions: script.functions.filter((fn) => (fn.ranges[0]?.count ?? 0) > 0).map((fn) => fn.functionName || '(anonymous)'),
    }))
    .filter((entry) => entry.functions.length > 0)
    .sort((a, b) => a.file.localeCompare(b.file));
}

const redis = await startRedis();
const upstream = await startUpstream();
const gateway = await startGateway(config(redis.url), { UP: upstream.url });
const session = new Session();
try {
  const url = `${gateway.url}/search`;
  const ask = (key: string) => call(url, { headers: { 'x-api-key': key } });
  // Every path once on another tenant (lazy modules, first-call caches): admitted, refused by Redis, refused by the cache.
  for (let i = 0; i < 3; i++) await ask('key-warm-0001');
  await ask('key-walk-0001'); // admitted: the walked tenant's bucket is now empty
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  const walks: Record<string, { status: number; files: { file: string; functions: string[] }[] }> = {};
  for (const name of ['refused by Redis', 'refused by the negative cache']) {
    await session.post('Profiler.takePreciseCoverage'); // resets the counts
    const reply = await ask('key-walk-0001');
    walks[name] = { status: reply.status, files: filesRan((await session.post('Profiler.takePreciseCoverage')) as Coverage) };
  }
  if (process.argv.includes('--json')) console.log(JSON.stringify(walks, null, 2));
  else {
    for (const [name, walk] of Object.entries(walks)) {
      console.log(`\n${name}: ${walk.status}, ${walk.files.length} files of src/`);
      for (const { file, functions } of walk.files) console.log(`  ${file}  ${functions.join(' ')}`);
    }
  }
} finally {
  session.disconnect();
  await gateway.close();
  await upstream.close();
  await redis.stop();
}
