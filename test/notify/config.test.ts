// A limit's notify: as loaded: thresholds, URL and secret checked, each error
// naming its file, line and field; the secret never printed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/decision-service/load-config.js';

const UP = 'http://127.0.0.1:9';
const RULE = '{ policy: fixed_window, limit: 100, windowMs: 60000 }';
const config = (notify: string, env: Record<string, string> = {}, baseDir?: string) =>
  parseConfig(`routes:\n  - id: search\n    path: /search\n    upstream: ${UP}\n    limits:\n      - id: daily\n        rule: ${RULE}\n        notify: ${notify}\n`, { source: 'n.yaml', env, ...(baseDir ? { baseDir } : {}) });
const refused = (notify: string, message: RegExp, env: Record<string, string> = {}) => assert.throws(() => config(notify, env), message);

describe('notify: in the config file', () => {
  it('loads thresholds sorted, the URL, the secret and the defaults, by limit id', () => {
    const loaded = config('{ at: [1.0, 0.8], url: "https://hooks.example.com/x", secret: s3cret-value }');
    const target = loaded.notifications.limits.daily;
    assert.deepEqual(target?.at, [0.8, 1]);
    assert.equal(target?.url, 'https://hooks.example.com/x');
    assert.equal(target?.secret.reveal(), 's3cret-value');
    assert.deepEqual([target?.timeoutMs, target?.retryForMs], [5_000, 3_600_000]);
    assert.deepEqual([loaded.notifications.maxQueued, loaded.notifications.concurrency, loaded.notifications.drainMs], [10_000, 4, 5_000]);
  });

  it('never prints the secret: JSON and inspect show [redacted]', () => {
    const loaded = config('{ at: [0.8], url: "http://h/x", secret: s3cret-value }');
    assert.doesNotMatch(JSON.stringify(loaded), /s3cret-value/);
    assert.doesNotMatch(inspect(loaded, { depth: 20 }), /s3cret-value/);
  });

  it('reads secretEnv and secretFile', () => {
    assert.equal(config('{ at: [0.8], url: "http://h/x", secretEnv: HOOK_SECRET }', { HOOK_SECRET: 'from-env' }).notifications.limits.daily?.secret.reveal(), 'from-env');
    const dir = mkdtempSync(join(tmpdir(), 'sluice-notify-'));
    try {
      writeFileSync(join(dir, 'hook.secret'), 'from-file\n');
      assert.equal(config('{ at: [0.8], url: "http://h/x", secretFile: hook.secret }', {}, dir).notifications.limits.daily?.secret.reveal(), 'from-file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses thresholds outside (0, 1], an empty or repeated list, naming field and line', () => {
    refused('{ at: [0], url: "http://h/x", secret: s }', /n\.yaml:8: routes\[0\]\.limits\[0\]\.notify\.at\[0\]: must be above 0/);
    refused('{ at: [0.8, 1.5], url: "http://h/x", secret: s }', /n\.yaml:8: routes\[0\]\.limits\[0\]\.notify\.at\[1\]: must be at most 1/);
    refused('{ at: [], url: "http://h/x", secret: s }', /notify\.at: must list at least one threshold/);
    refused('{ at: [0.8, 0.8], url: "http://h/x", secret: s }', /notify\.at: lists a threshold twice/);
  });

  it('refuses a URL that is not http(s)', () => {
    refused('{ at: [0.8], url: "ftp://h/x", secret: s }', /notify\.url: must be an http:\/\/ or https:\/\/ URL/);
    refused('{ at: [0.8], url: "not a url", secret: s }', /notify\.url: must be an http:\/\/ or https:\/\/ URL/);
  });

  it('refuses a missing secret, two secrets, or an unset variable', () => {
    refused('{ at: [0.8], url: "http://h/x" }', /n\.yaml:8: routes\[0\]\.limits\[0\]\.notify\.secret: is required/);
    refused('{ at: [0.8], url: "http://h/x", secret: s, secretEnv: X }', /notify\.secretEnv: give one of/);
    refused('{ at: [0.8], url: "http://h/x", secretEnv: NOT_SET }', /notify\.secretEnv: the environment variable NOT_SET is not set/);
  });

  it('takes notify on a global limit, refuses it on a concurrency limit', () => {
    const global = parseConfig(`routes:\n  - { id: a, path: /a, upstream: ${UP} }\nglobalLimits:\n  - id: all\n    key: route\n    rule: ${RULE}\n    notify: { at: [1.0], url: "http://h/x", secret: s }\n`);
    assert.deepEqual(global.notifications.limits.all?.at, [1]);
    assert.throws(
      () => parseConfig(`routes:\n  - id: a\n    path: /a\n    upstream: ${UP}\n    limits:\n      - { id: cc, kind: concurrency, max: 2, notify: { at: [1.0], url: "http://h/x", secret: s } }\n`),
      /routes\[0\]\.limits\[0\]\.notify: applies to rate limits only/,
    );
  });
});
