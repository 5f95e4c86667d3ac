// A reload reports the restart-only fields that differ from what the process
// runs, not from the file it loaded last: a second reload of the same changed
// file still says the change waits for a restart (docs audit, item 8), and
// /readyz's config status carries the same list until a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { ConfigReloader } from '../../src/admin/config-reload.js';

const BASE = `listen: 127.0.0.1:9100
routes:
  - { id: r, path: /r, upstream: 'http://127.0.0.1:8090' }
`;

describe('ConfigReloader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-reloader-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps naming a restart-only change on every reload until the file matches what runs again', async () => {
    const file = join(dir, 'sluice.yaml');
    writeFileSync(file, BASE);
    const applied: number[] = [];
    const reloader = new ConfigReloader({ file, env: {}, config: loadConfig(file, {}), logger: pino({ level: 'silent' }), apply: (config) => void applied.push(config.limits.maxBodyBytes) });

    writeFileSync(file, `${BASE}log: { level: warn }\nlimits: { maxHeaderBytes: 8192, maxBodyBytes: 2048 }\n`);
    const first = await reloader.reload();
    assert.equal(first.outcome, 'applied');
    assert.deepEqual(first.outcome === 'applied' && first.needsRestart, ['log', 'limits.maxHeaderBytes']);

    const again = await reloader.reload();
    assert.deepEqual(again.outcome === 'applied' && again.needsRestart, ['log', 'limits.maxHeaderBytes'], 'still not live: compared with what runs');
    assert.deepEqual(reloader.status().needsRestart, ['log', 'limits.maxHeaderBytes']);
    assert.deepEqual(applied, [2048, 2048], 'what a reload can apply was applied both times');

    writeFileSync(file, BASE);
    const back = await reloader.reload();
    assert.deepEqual(back.outcome === 'applied' && back.needsRestart, []);
    assert.equal(reloader.status().needsRestart, undefined);
  });
});
