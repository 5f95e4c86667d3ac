// `workers:` in the config, SLUICE_WORKERS and `--workers`: a count or auto,
// default 1; several workers on the memory store are refused, naming the field.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { restartOnlyChanges } from '../../src/admin/config-reload.js';
import { sluiceCli } from '../helpers/cli.js';

const BASE = `routes:
  - { id: r, path: /r, upstream: 'http://127.0.0.1:8090' }
`;
const REDIS = `store: { url: 'redis://127.0.0.1:6379' }\n`;

function refusal(text: string, env: Record<string, string> = {}): ConfigError {
  try {
    parseConfig(text, { source: 'sluice.yaml', env });
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail('the config was accepted');
}

describe('workers in the config', () => {
  it('defaults to 1; takes a count, auto (the available cores) and SLUICE_WORKERS', () => {
    assert.equal(parseConfig(BASE).workers, 1);
    assert.equal(parseConfig(`${BASE}${REDIS}workers: 3\n`).workers, 3);
    assert.equal(parseConfig(`${BASE}${REDIS}workers: auto\n`).workers, availableParallelism());
    assert.equal(parseConfig(`${BASE}${REDIS}`, { env: { SLUICE_WORKERS: '4' } }).workers, 4);
    assert.equal(parseConfig(`${BASE}${REDIS}`, { env: { SLUICE_WORKERS: 'auto' } }).workers, availableParallelism());
  });

  it('refuses several workers on the memory store, naming the field and its line', () => {
    const error = refusal(`${BASE}workers: 2\n`);
    assert.equal(error.field, 'workers');
    assert.match(error.message, /^sluice\.yaml:3: workers: 2 workers need a shared bucket store: the memory store keeps buckets inside one process/);
    assert.match(refusal(BASE, { SLUICE_WORKERS: '2' }).message, /^SLUICE_WORKERS: workers: 2 workers need a shared bucket store/);
    assert.equal(parseConfig(`${BASE}workers: 1\n`).workers, 1, 'one worker on the memory store is today\'s single process');
  });

  it('refuses a count that is no whole number from 1 to 1024', () => {
    for (const bad of ['0', '-1', '1.5', 'many', '2000']) {
      const error = refusal(`${BASE}${REDIS}workers: ${bad}\n`);
      assert.equal(error.field, 'workers', bad);
      assert.match(error.message, /^sluice\.yaml:4: workers: /, bad);
    }
  });

  it('names the reloaded fields that wait for a restart', () => {
    const before = parseConfig(`${BASE}${REDIS}`);
    const after = parseConfig(`listen: 127.0.0.1:9999\nlimits: { keepAliveTimeoutMs: 1000, maxBodyBytes: 10 }\n${BASE}${REDIS}workers: 2\n`);
    assert.deepEqual(restartOnlyChanges(before, after), ['listen', 'workers', 'limits.keepAliveTimeoutMs']);
    assert.deepEqual(restartOnlyChanges(before, parseConfig(`${BASE.replace('/r', '/other')}${REDIS}`)), []);
  });
});

describe('sluice check / start --workers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-workers-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (args: string[]) => spawnSync(process.execPath, [...sluiceCli(), ...args], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, SLUICE_LISTEN: '127.0.0.1:0' } });

  it('check and start refuse workers: 2 with store: memory the same way; start --workers 2 too', () => {
    const file = join(dir, 'memory.yaml');
    writeFileSync(file, `${BASE}store: { type: memory }\nworkers: 2\n`);
    const checked = cli(['check', '--config', file]);
    const started = cli(['start', '--config', file]);
    assert.equal(checked.status, 2);
    assert.match(checked.stderr, new RegExp(`^${file}:4: workers: 2 workers need a shared bucket store`));
    assert.deepEqual([started.status, started.stderr], [2, checked.stderr]);
    writeFileSync(file, BASE);
    const flagged = cli(['start', '--config', file, '--workers', '2']);
    assert.equal(flagged.status, 2);
    assert.match(flagged.stderr, /^SLUICE_WORKERS: workers: 2 workers need a shared bucket store/);
  });
});
