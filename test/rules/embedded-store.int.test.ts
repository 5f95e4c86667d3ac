import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { type StoreFactory, storeContract } from './store-contract.js';
import { overrideContract } from './override-contract.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-embedded-'));
  dirs.push(dir);
  return dir;
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const factory: StoreFactory = {
  location: async () => tempDir(),
  open: (dataDir, options) => new EmbeddedRuleStore({ dataDir, ...options }),
  sql: async (dataDir, text) => {
    const db = new Database(join(dataDir, 'rules.sqlite'));
    try {
      db.exec(text);
    } finally {
      db.close();
    }
  },
};

storeContract('embedded', factory);
overrideContract('embedded', factory);

describe('embedded store', () => {
  const bucket = { policy: 'token_bucket' as const, capacity: 5, refillPerSecond: 1 };

  it('survives a restart: close and reopen the same dir', async () => {
    const dir = tempDir();
    const first = new EmbeddedRuleStore({ dataDir: dir });
    await first.putRule('shop-a', 'orders', bucket);
    const key = await first.createKey('shop-a');
    await first.close();
    const second = new EmbeddedRuleStore({ dataDir: dir });
    assert.deepEqual((await second.getRule('shop-a', 'orders'))?.rule, bucket);
    assert.equal((await second.listActiveKeyHashes())[0]?.id, key.id);
    await second.close();
    assert.equal(existsSync(join(dir, 'sluice.lock')), false, 'close releases the lock');
  });

  it('refuses a second opener in the same process with an error naming the dir', async () => {
    const dir = tempDir();
    const first = new EmbeddedRuleStore({ dataDir: dir });
    assert.throws(() => new EmbeddedRuleStore({ dataDir: dir }), (error: Error) => error.message.includes(dir) && /in use by process/.test(error.message));
    assert.deepEqual(await first.listRules(), []);
    await first.close();
  });

  it('refuses a second process with a clear error, and the first keeps working', async () => {
    const dir = tempDir();
    const first = new EmbeddedRuleStore({ dataDir: dir });
    await first.putRule('shop-a', 'orders', bucket);
    const script = `import { EmbeddedRuleStore } from ${JSON.stringify(new URL('../../src/rules/embedded/store.ts', import.meta.url).href)};
      try { new EmbeddedRuleStore({ dataDir: ${JSON.stringify(dir)} }); process.exit(0); } catch (e) { console.error(e.message); process.exit(3); }`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 3, child.stderr);
    assert.match(child.stderr, new RegExp(`data dir ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by process ${process.pid}`));
    assert.deepEqual((await first.getRule('shop-a', 'orders'))?.rule, bucket);
    await first.close();
  });

  it('cleans a stale lock left by a dead process', async () => {
    const dir = tempDir();
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(dir, 'sluice.lock'), `${dead.stdout}\n`);
    const store = new EmbeddedRuleStore({ dataDir: dir });
    await store.putRule('shop-a', 'orders', bucket);
    await store.close();
  });
});
