// The stop that never ended (docs audit, item 1): with workers, traffic, then
// SIGUSR2 (every worker replaced), then SIGTERM, the primary must exit by
// itself within the drain's grace period with code 0; before the fix it
// stayed alive with no children until a second signal.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { freshRequest, SluiceProcess, sleep, writeWorkersConfig } from '../helpers/sluice-process.js';

/** The drain's grace (10 s) plus the pool's margin: past this the primary is stuck, not draining. */
const GRACE_BOUND_MS = 25_000;

describe('SIGTERM after SIGUSR2 with workers', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let dir: string;
  let sluice: SluiceProcess;

  before(async () => {
    redis = await startRedis();
    upstream = await startUpstream();
  });
  after(async () => {
    sluice?.kill();
    await upstream?.close();
    await redis?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the primary exits 0 by itself once the replaced workers drained', async () => {
    const setup = await writeWorkersConfig('sluice-roll-stop-', redis.port, `routes:\n  - { id: r, path: /r, upstream: '${upstream.url}' }\ntenants: { unknownKeys: default-rule }\n`);
    dir = setup.dir;
    sluice = new SluiceProcess(setup.file, setup.adminUrl, ['--workers', '2']);
    await sluice.logged('sluice workers serving');
    for (let i = 0; i < 4; i++) assert.equal((await freshRequest(`${setup.gateway}/r`)).status, 200);
    const before = await sluice.workerPids();
    sluice.child.kill('SIGUSR2');
    await sluice.logged('workers replaced');
    const after = await sluice.workerPids();
    assert.equal(after.length, 2);
    assert.ok(after.every((pid) => !before.includes(pid)), 'every worker was replaced');
    sluice.child.kill('SIGTERM');
    const code = await Promise.race([sluice.exited, sleep(GRACE_BOUND_MS).then(() => 'still running')]);
    assert.equal(code, 0, sluice.output);
  });
});
