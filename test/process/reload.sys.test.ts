// Config reload without downtime, on real processes. With 2 workers on Redis:
// continuous keep-alive load while the config is reloaded 10 times (valid and
// invalid in turn, through POST /reload and SIGHUP) and while every worker is
// replaced (SIGUSR2): 0 errors, 0 resets, the new route served after each
// valid reload, the old one kept after each invalid one. With one process:
// SIGHUP applies a valid file and keeps serving through an invalid one.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KeepAliveLoad } from '../helpers/drain-load.js';
import { startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { ADMIN_TOKEN, assertNoClientErrors, freshRequest, SluiceProcess } from '../helpers/sluice-process.js';

interface Setup {
  port: number;
  adminPort: number;
  dir: string;
  upstream: string;
  store: string;
}

/** The config with one extra route `/v{n}`; `broken` puts a bad upstream on line 6. */
function configText(setup: Setup, extra: number, broken = false): string {
  return `listen: 127.0.0.1:${setup.port}
admin: { listen: '127.0.0.1:${setup.adminPort}', token: ${ADMIN_TOKEN} }
dataDir: ${join(setup.dir, 'data')}
routes:
  - { id: r, path: /r, upstream: '${setup.upstream}' }
  - { id: v${extra}, path: /v${extra}, upstream: '${broken ? 'not-a-url' : setup.upstream}' }
tenants: { unknownKeys: default-rule }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
${setup.store}
`;
}

const statusOf = async (url: string) => (await freshRequest(url)).status;

const hashOf = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12);

describe('config reload with 2 workers under keep-alive load', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let setup: Setup;
  let sluice: SluiceProcess;
  let file: string;

  before(async () => {
    redis = await startRedis();
    upstream = await startUpstream();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-reload-'));
    setup = { port: await freePort(), adminPort: await freePort(), dir, upstream: upstream.url, store: `store: { url: 'redis://127.0.0.1:${redis.port}', deadlineMs: 2000 }\nworkers: 2` };
    file = join(dir, 'sluice.yaml');
    writeFileSync(file, configText(setup, 0));
    sluice = new SluiceProcess(file, `http://127.0.0.1:${setup.adminPort}`);
    await sluice.logged('sluice workers serving');
  });
  after(async () => {
    sluice?.kill();
    await upstream?.close();
    await redis?.stop();
    rmSync(setup.dir, { recursive: true, force: true });
  });

  it('10 reloads and a rolling replacement: 0 errors, new routes served, invalid files refused', async () => {
    const gateway = `http://127.0.0.1:${setup.port}`;
    const load = new KeepAliveLoad(`${gateway}/r`, { 'x-api-key': 'someone-anonymous' });
    load.start(16);
    const firstPids = await sluice.workerPids();
    let served = 0;
    for (let round = 1; round <= 10; round++) {
      if (round === 4) process.kill(sluice.child.pid!, 'SIGUSR2'); // replace every worker while reloading goes on
      if (round % 2 === 1) {
        writeFileSync(file, configText(setup, round));
        if (round % 4 === 1) assert.equal((await sluice.admin('POST', '/reload')).body.outcome, 'applied');
        else {
          const hash = hashOf(file);
          process.kill(sluice.child.pid!, 'SIGHUP');
          await sluice.until('the SIGHUP reload applied', async () => (await sluice.admin('GET', '/readyz')).body.config.hash === hash);
        }
        served = round;
      } else {
        writeFileSync(file, configText(setup, round, true));
        const refused = await sluice.admin('POST', '/reload');
        assert.equal(refused.status, 400);
        assert.match(refused.body.error.message, /sluice\.yaml:6: routes\[1\]\.upstream: must be an http\(s\) URL/);
      }
      // Fresh connections reach both workers: each serves the last valid config.
      for (let i = 0; i < 4; i++) {
        assert.equal(await statusOf(`${gateway}/v${served}`), 200, `round ${round}: /v${served} served`);
        if (served > 1) assert.equal(await statusOf(`${gateway}/v${served - 2}`), 404, `round ${round}: the old route is gone`);
      }
    }
    await sluice.until('every worker was replaced', async () => {
      const pids = await sluice.workerPids();
      return pids.length === 2 && pids.every((pid) => !firstPids.includes(pid)) && sluice.output.includes('workers replaced');
    });
    assert.equal(await statusOf(`${gateway}/v${served}`), 200);
    const metrics = (await sluice.admin('GET', '/metrics')).text;
    assert.match(metrics, /sluice_config_reloads_total\{outcome="applied"\} 5\n/);
    assert.match(metrics, /sluice_config_reloads_total\{outcome="invalid"\} 5\n/);
    assert.match(metrics, /sluice_worker_restarts_total 0\n/, 'a replacement asked for is no restart');

    sluice.child.kill('SIGTERM');
    await load.finished();
    assert.equal(await sluice.exited, 0, sluice.output);
    assertNoClientErrors(load, 100);
  });
});

describe('config reload in one process (SIGHUP)', () => {
  let upstream: TestUpstream;
  let setup: Setup;
  let sluice: SluiceProcess;

  before(async () => {
    upstream = await startUpstream();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-reload1-'));
    setup = { port: await freePort(), adminPort: await freePort(), dir, upstream: upstream.url, store: '' };
  });
  after(async () => {
    sluice?.kill();
    await upstream?.close();
    rmSync(setup.dir, { recursive: true, force: true });
  });

  it('applies a valid file, refuses an invalid one with file:line and keeps serving', async () => {
    const file = join(setup.dir, 'sluice.yaml');
    writeFileSync(file, configText(setup, 1));
    sluice = new SluiceProcess(file, `http://127.0.0.1:${setup.adminPort}`);
    await sluice.logged('admin API listening');
    const gateway = `http://127.0.0.1:${setup.port}`;
    writeFileSync(file, configText(setup, 2));
    process.kill(sluice.child.pid!, 'SIGHUP');
    await sluice.until('/v2 served', async () => (await statusOf(`${gateway}/v2`)) === 200);
    assert.equal(await statusOf(`${gateway}/v1`), 404);
    writeFileSync(file, configText(setup, 3, true));
    process.kill(sluice.child.pid!, 'SIGHUP');
    await sluice.logged('config reload refused');
    assert.match(sluice.output, /sluice\.yaml:6: routes\[1\]\.upstream/);
    assert.equal(await statusOf(`${gateway}/v2`), 200);
    assert.equal(sluice.child.exitCode, null, 'a bad reload never takes the instance down');
    const ready = await sluice.admin('GET', '/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.body.config.hash, createHash('sha256').update(configText(setup, 2)).digest('hex').slice(0, 12));
  });

  it("applies the tenants' keys, the header options and a route's limit", async () => {
    const file = join(setup.dir, 'sluice.yaml');
    const gateway = `http://127.0.0.1:${setup.port}`;
    writeFileSync(
      file,
      `listen: 127.0.0.1:${setup.port}
admin: { listen: '127.0.0.1:${setup.adminPort}', token: ${ADMIN_TOKEN} }
dataDir: ${join(setup.dir, 'data')}
routes:
  - { id: r, path: /r, upstream: '${setup.upstream}', limits: [{ id: per-tenant, key: tenant, rule: { policy: token_bucket, capacity: 3, refillPerSecond: 0.001 } }] }
tenants: { unknownKeys: reject, keys: [{ key: reloaded-key-1, tenant: shop }] }
headers: { ietf: true }
`,
    );
    const hash = hashOf(file);
    process.kill(sluice.child.pid!, 'SIGHUP');
    await sluice.until('the reload applied', async () => (await sluice.admin('GET', '/readyz')).body.config.hash === hash);
    assert.equal((await freshRequest(`${gateway}/r`)).status, 401, 'unknown keys are refused now');
    const answers = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${gateway}/r`, { headers: { 'x-api-key': 'reloaded-key-1' } });
      await res.text();
      answers.push({ status: res.status, limit: res.headers.get('x-ratelimit-limit'), policy: res.headers.get('ratelimit-policy') });
    }
    assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200, 429], 'the new limit of 3');
    assert.equal(answers[0]!.limit, '3');
    assert.match(answers[0]!.policy ?? '', /q=3/, 'the IETF fields are on');
  });
  it("applies the decision service's routes and limits, on the listener it already has", async () => {
    const file = join(setup.dir, 'sluice.yaml');
    const decisionPort = await freePort();
    const decide = async (uri: string) => {
      const res = await fetch(`http://127.0.0.1:${decisionPort}/decide`, { headers: { 'x-original-method': 'GET', 'x-original-uri': uri } });
      await res.text();
      return res.status;
    };
    const withRoute = (id: string, capacity: number) => `listen: 127.0.0.1:${setup.port}
admin: { listen: '127.0.0.1:${setup.adminPort}', token: ${ADMIN_TOKEN} }
dataDir: ${join(setup.dir, 'data')}
routes:
  - { id: ${id}, path: /${id}, upstream: '${setup.upstream}', anonymous: true, limits: [{ id: ${id}, key: route, rule: { policy: token_bucket, capacity: ${capacity}, refillPerSecond: 0.001 } }] }
decisionService: { httpListen: '127.0.0.1:${decisionPort}' }
`;
    // The decision listener is new: it comes with a restart, then reloads apply under it.
    if (sluice?.child.exitCode === null) {
      const gone = new Promise((resolve) => sluice.child.once('exit', resolve));
      sluice.kill();
      await gone;
    }
    writeFileSync(file, withRoute('d1', 5));
    sluice = new SluiceProcess(file, `http://127.0.0.1:${setup.adminPort}`);
    await sluice.logged('decision service listening');
    assert.equal(await decide('/d1'), 200);
    writeFileSync(file, withRoute('d2', 1));
    const hash = hashOf(file);
    process.kill(sluice.child.pid!, 'SIGHUP');
    await sluice.until('the reload applied', async () => (await sluice.admin('GET', '/readyz')).body.config.hash === hash);
    // The old route is gone: without an API key that is a 401 before a 404, as on the gateway.
    assert.deepEqual([await decide('/d1'), await decide('/d2'), await decide('/d2')], [401, 200, 429], 'the old route is gone; the new one has its limit of 1');
  });
});
