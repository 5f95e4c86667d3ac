// `sluice start` with 2 workers on Redis and the embedded SQLite rule store,
// as real processes: both workers serve, a tenant's limit holds across them, a
// rule and a key written through the admin API reach both (one SQLite writer,
// no lock error), /readyz tells which workers decide on the fallback, a
// killed worker is replaced and counted, SIGTERM under
// keep-alive load drains both with no client error.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { DASHBOARD_KEY } from '../../src/dashboard/cluster-feed.js';
import { KeepAliveLoad } from '../helpers/drain-load.js';
import { startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { assertNoClientErrors, freshRequest, SluiceProcess, sleep, writeWorkersConfig } from '../helpers/sluice-process.js';

describe('sluice start --workers 2', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let dir: string;
  let sluice: SluiceProcess;
  let gateway: string;
  let reader: Redis;
  let decisionUrl: string;

  before(async () => {
    const decisionPort = await freePort();
    decisionUrl = `http://127.0.0.1:${decisionPort}`;
    redis = await startRedis();
    upstream = await startUpstream();
    const setup = await writeWorkersConfig(
      'sluice-workers-',
      redis.port,
      `routes:
  - { id: r, path: /r, upstream: '${upstream.url}' }
  - { id: capped, path: /capped, upstream: '${upstream.url}', anonymous: true, limits: [{ id: capped, key: route, rule: { policy: token_bucket, capacity: 25, refillPerSecond: 0.001 } }] }
  - { id: decided, path: /decided, upstream: '${upstream.url}', anonymous: true, limits: [{ id: decided, key: route, rule: { policy: token_bucket, capacity: 10, refillPerSecond: 0.001 } }] }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
decisionService: { httpListen: '127.0.0.1:${decisionPort}' }
`,
    );
    ({ dir, gateway } = setup);
    sluice = new SluiceProcess(setup.file, setup.adminUrl, ['--workers', '2']);
    await sluice.logged('sluice workers serving');
    reader = new Redis(redis.port, '127.0.0.1');
  });
  after(async () => {
    sluice?.kill();
    reader?.disconnect();
    await upstream?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const fresh = (path: string, headers: Record<string, string> = {}) => freshRequest(`${gateway}${path}`, headers);

  /** Decisions each worker published to the dashboard feed, by pid. */
  async function decisionsByPid(): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    for (const text of Object.values(await reader.hgetall(DASHBOARD_KEY))) {
      const snapshot = JSON.parse(text) as { id: string; stats: { routes: Record<string, { allowed: number[]; refused: number[] }> } };
      const pid = Number(/-(\d+)-[^-]+$/.exec(snapshot.id)?.[1]);
      const sum = Object.values(snapshot.stats.routes).reduce((total, series) => total + [...series.allowed, ...series.refused].reduce((a, b) => a + b, 0), 0);
      out.set(pid, sum);
    }
    return out;
  }

  it("serves the decision service's forward-auth from the workers, one limit across them", async () => {
    const forwarded = { 'x-original-method': 'GET', 'x-original-uri': '/decided' };
    const statuses = await Promise.all(Array.from({ length: 30 }, () => freshRequest(`${decisionUrl}/decide`, forwarded)));
    assert.equal(statuses.filter(({ status }) => status === 200).length, 10);
    assert.equal(statuses.filter(({ status }) => status === 429).length, 20);
  });

  it('serves from both workers, and a limit of 25 admits exactly 25 across them', async () => {
    const pids = await sluice.workerPids();
    assert.equal(pids.length, 2);
    const statuses = await Promise.all(Array.from({ length: 80 }, () => fresh('/capped')));
    assert.equal(statuses.filter(({ status }) => status === 200).length, 25);
    assert.equal(statuses.filter(({ status }) => status === 429).length, 55);
    await sluice.until('both workers published decisions', async () => {
      const seen = await decisionsByPid();
      return pids.every((pid) => (seen.get(pid) ?? 0) > 0);
    });
    const metrics = (await sluice.admin('GET', '/metrics')).text;
    // Summed over the workers by the primary's aggregator.
    assert.match(metrics, /sluice_limit_decisions_total\{limit="capped",outcome="allowed"\} 25\n/);
    assert.match(metrics, /sluice_limit_decisions_total\{limit="capped",outcome="limited"\} 55\n/);
    assert.match(metrics, /sluice_instances 2\n/, 'each worker is a member; the gauge is not summed');
    assert.match(metrics, /sluice_workers 2\n/);
  });

  it('a key, a rule and a deny list entry written through the admin API reach both workers; no SQLite lock error', async () => {
    const created = await sluice.admin('POST', '/keys', { tenant: 'acme' });
    assert.equal(created.status, 201, created.text);
    const put = await sluice.admin('PUT', '/rules/acme/r', { policy: 'token_bucket', capacity: 777, refillPerSecond: 777 });
    assert.equal(put.status, 200, put.text);
    // Ten fresh connections in a row (alternating workers) all see the new key and rule.
    await sluice.until('every worker knows the key and the rule', async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, () => fresh('/r', { 'x-api-key': created.body.key })));
      return answers.every(({ status, limit }) => status === 200 && limit === '777');
    });
    // A deny list entry too: each worker's cache reads it through the primary and applies it.
    const denied = await sluice.admin('POST', '/lists', { action: 'deny', tenant: 'acme' });
    assert.equal(denied.status, 201, denied.text);
    await sluice.until('every worker denies the listed tenant', async () => {
      const answers = await Promise.all(Array.from({ length: 10 }, () => fresh('/r', { 'x-api-key': created.body.key })));
      return answers.every(({ status }) => status === 403);
    });
    assert.equal((await sluice.admin('DELETE', `/lists/${denied.body.id}`)).status, 204);
    assert.doesNotMatch(sluice.output, /SQLITE_BUSY|database is locked|SqliteError/);
  });

  it("reports each worker's engine on /readyz: Redis paused puts them on the fallback, and back", async () => {
    const engine = async () => (await sluice.admin('GET', '/readyz')).body.engine as { mode: string; storeReachable: boolean; workers: { pid: number; mode: string }[] };
    const traffic = () => Promise.all(Array.from({ length: 12 }, () => fresh('/r', { 'x-api-key': 'key-readyz' })));
    const all = (mode: string) => async () => {
      const now = await engine();
      return now.workers.length === 2 && now.workers.every((worker) => worker.mode === mode);
    };
    await sluice.until('both workers report Redis', all('redis'));
    redis.pause();
    try {
      // Each worker's breaker opens on its own failed calls: requests keep reaching both until both say so.
      await sluice.until('both workers on the fallback', async () => {
        await traffic();
        return all('fallback')();
      });
      const paused = await engine();
      assert.equal(paused.mode, 'fallback');
      assert.equal(paused.storeReachable, false);
      assert.deepEqual(paused.workers.map((worker) => worker.pid).sort(), (await sluice.workerPids()).sort());
    } finally {
      redis.resume();
    }
    await sluice.until('both workers back on Redis', async () => {
      await traffic();
      return all('redis')();
    });
    assert.equal((await engine()).storeReachable, true);
  });

  it('replaces a killed worker and counts it', async () => {
    const [victim, survivor] = await sluice.workerPids();
    process.kill(victim!, 'SIGKILL');
    await sluice.until('a new worker serves', async () => {
      const pids = await sluice.workerPids();
      return pids.length === 2 && !pids.includes(victim!) && pids.includes(survivor!);
    });
    assert.match((await sluice.admin('GET', '/metrics')).text, /sluice_worker_restarts_total 1\n/);
    const line = sluice.output.split('\n').find((text) => text.includes('gateway worker exited unasked'));
    assert.ok(line, sluice.output);
    assert.equal(line.match(/"pid":/g)?.length, 1, `one pid key, the primary's: ${line}`);
    const logged = JSON.parse(line) as { pid: number; workerPid: number; signal: string };
    assert.deepEqual([logged.pid, logged.workerPid, logged.signal], [sluice.child.pid, victim, 'SIGKILL']);
    assert.equal((await fresh('/r')).status, 200);
  });

  it('drains both workers on SIGTERM under keep-alive load: no client error, exit 0', async () => {
    const load = new KeepAliveLoad(`${gateway}/r`, { 'x-api-key': 'someone-anonymous' });
    load.start(40);
    for (let waited = 0; load.outcomes.filter((outcome) => outcome.status !== undefined).length < 200 && waited < 30_000; waited += 100) await sleep(100);
    sluice.child.kill('SIGTERM');
    await load.finished();
    assert.equal(await sluice.exited, 0, sluice.output);
    assertNoClientErrors(load, 200);
  });
});
