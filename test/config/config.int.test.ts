// Config loading: every error names the file, the line and the field; `${VAR}`
// and `${VAR:-default}` expand; SLUICE_* override; `sluice check` and `sluice
// start` refuse a bad file with a non-zero exit and serve nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { isSluiceError } from '../../src/core/errors.js';
import { createEngine } from '../../src/engine-factory/create-engine.js';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { hashApiKeyHex } from '../../src/rules/keys.js';
import { sluiceCli } from '../helpers/cli.js';

const GOOD = `listen: 127.0.0.1:9000
routes:
  - id: create-order
    methods: [POST]
    path: /orders
    upstream: http://127.0.0.1:8090
  - id: get-order
    path: /orders/:id
    upstream: \${UPSTREAM_URL:-http://127.0.0.1:8091}
    timeoutMs: \${TIMEOUT:-2500}
tenants:
  unknownKeys: reject
  keys:
    - key: \${SHOP_A_KEY}
      tenant: shop-a
rules:
  - tenant: shop-a
    route: create-order
    policy: token_bucket
    capacity: 2
    refillPerSecond: 1
`;

function errorOf(text: string, env: Record<string, string> = { SHOP_A_KEY: 'secret-key-a' }): ConfigError {
  try {
    parseConfig(text, { source: 'config.yaml', env });
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error;
  }
  assert.fail('the config was accepted');
}

const replaceLine = (text: string, from: string, to: string) => {
  assert.ok(text.includes(from), from);
  return text.replace(from, to);
};

describe('config', () => {
  it('loads a good file: defaults, expansion with defaults, hashed keys, frozen', () => {
    const config = parseConfig(GOOD, { source: 'config.yaml', env: { SHOP_A_KEY: 'secret-key-a' } });
    assert.deepEqual(config.listen, { host: '127.0.0.1', port: 9000 });
    assert.deepEqual(config.admin.listen, { host: '127.0.0.1', port: 8081 });
    assert.deepEqual(config.routes[1]!.upstreams, [{ url: 'http://127.0.0.1:8091', weight: 1 }]);
    assert.equal(config.routes[1]!.timeoutMs, 2500, `a whole \${VAR:-n} in a plain scalar stays a number`);
    assert.equal(config.routes[0]!.timeoutMs, 30_000);
    assert.deepEqual(config.defaultRule, { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 });
    assert.deepEqual(config.tenants.keys, [{ keyHash: hashApiKeyHex('secret-key-a'), tenant: 'shop-a' }]);
    assert.ok(!JSON.stringify(config).includes('secret-key-a'), 'the clear key is not kept');
    assert.equal(config.tenants.header, 'x-api-key');
    assert.equal(config.store.type, 'memory');
    assert.equal(config.dataDir, './data');
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.routes[0]) && Object.isFrozen(config.rules[0]!.rule));
  });

  it(`takes a bare port as a YAML number, plain or from \${PORT:-n}`, () => {
    const bare = parseConfig(replaceLine(GOOD, 'listen: 127.0.0.1:9000', 'listen: 9001'), { env: { SHOP_A_KEY: 'secret-key-a' } });
    assert.deepEqual(bare.listen, { host: '127.0.0.1', port: 9001 });
    const text = `${replaceLine(GOOD, 'listen: 127.0.0.1:9000', `listen: \${PORT:-8080}`)}admin:\n  listen: 9002\n`;
    const fromEnv = parseConfig(text, { env: { SHOP_A_KEY: 'secret-key-a', PORT: '7001' } });
    assert.deepEqual(fromEnv.listen, { host: '127.0.0.1', port: 7001 });
    assert.deepEqual(fromEnv.admin.listen, { host: '127.0.0.1', port: 9002 });
    assert.deepEqual(parseConfig(text, { env: { SHOP_A_KEY: 'secret-key-a' } }).listen, { host: '127.0.0.1', port: 8080 });
    assert.equal(errorOf(replaceLine(GOOD, 'listen: 127.0.0.1:9000', 'listen: 70000')).message, 'config.yaml:1: listen: port must be at most 65535');
  });

  it(`takes \${VAR} from the environment over the default`, () => {
    const config = parseConfig(GOOD, { env: { SHOP_A_KEY: 'secret-key-a', UPSTREAM_URL: 'https://orders.internal:8443', TIMEOUT: '900' } });
    assert.deepEqual(config.routes[1]!.upstreams, [{ url: 'https://orders.internal:8443', weight: 1 }]);
    assert.equal(config.routes[1]!.timeoutMs, 900);
  });

  it('applies SLUICE_* overrides; a Redis setting switches to the Redis store', () => {
    const config = parseConfig(GOOD, {
      env: {
        SHOP_A_KEY: 'secret-key-a',
        SLUICE_LISTEN: '0.0.0.0:7000',
        SLUICE_ADMIN_LISTEN: '127.0.0.1:7001',
        SLUICE_ADMIN_TOKEN: 'a-long-enough-admin-token',
        SLUICE_REDIS_CLUSTER: '10.0.0.1:7000, 10.0.0.2:7000',
        SLUICE_DATABASE_URL: 'postgres://u@db/sluice',
        SLUICE_INSTANCES: '4',
        SLUICE_REGION: 'eu',
        SLUICE_DATA_DIR: '/var/lib/sluice',
      },
    });
    assert.deepEqual(config.listen, { host: '0.0.0.0', port: 7000 });
    assert.deepEqual(config.admin, { listen: { host: '127.0.0.1', port: 7001 }, token: 'a-long-enough-admin-token', tls: undefined, metrics: { listen: undefined, requireToken: false } });
    assert.equal(config.store.type, 'redis');
    assert.deepEqual(config.store.cluster, [
      { host: '10.0.0.1', port: 7000 },
      { host: '10.0.0.2', port: 7000 },
    ]);
    assert.equal(config.database.url, 'postgres://u@db/sluice');
    assert.equal(config.instances, 4);
    assert.equal(config.region, 'eu');
    assert.equal(config.dataDir, '/var/lib/sluice');
    const redis = parseConfig(GOOD, { env: { SHOP_A_KEY: 'secret-key-a', SLUICE_REDIS_URL: 'redis://127.0.0.1:6390' } });
    assert.equal(redis.store.type, 'redis');
    assert.equal(redis.store.url, 'redis://127.0.0.1:6390');
  });

  const cases: { name: string; text: string; message: string; env?: Record<string, string> }[] = [
    {
      name: 'an upstream that is not a URL',
      text: replaceLine(GOOD, 'upstream: http://127.0.0.1:8090', 'upstream: ftp://files'),
      message: 'config.yaml:6: routes[0].upstream: must be an http(s) URL with no path, e.g. http://127.0.0.1:8090',
    },
    {
      name: 'an unknown field',
      text: replaceLine(GOOD, `    timeoutMs: \${TIMEOUT:-2500}`, '    timeoutMs: 1\n    retries: 3'),
      message: 'config.yaml:11: routes[1].retries: unknown field (expected one of the documented fields)',
    },
    {
      name: 'a bad rule, reported by parseRule',
      text: replaceLine(GOOD, '    capacity: 2', '    capacity: 0'),
      message: 'config.yaml:20: rules[0].capacity: must be at least 1',
    },
    {
      name: 'an unknown policy',
      text: replaceLine(GOOD, 'policy: token_bucket', 'policy: magic'),
      message: 'config.yaml:19: rules[0].policy: unknown policy "magic"; expected one of token_bucket, gcra, fixed_window, sliding_window_log, sliding_window_counter, leaky_bucket',
    },
    {
      name: 'a rule for a route that does not exist',
      text: replaceLine(GOOD, '    route: create-order', '    route: nope'),
      message: 'config.yaml:18: rules[0].route: no route has id nope',
    },
    {
      name: 'a missing required field',
      text: replaceLine(GOOD, '    path: /orders/:id\n', ''),
      message: 'config.yaml:7: routes[1].path: is required',
    },
    {
      name: 'an unset variable without a default',
      text: GOOD,
      env: {},
      message: `config.yaml:14: tenants.keys[0].key: environment variable SHOP_A_KEY is not set (write \${SHOP_A_KEY:-default} to give a default)`,
    },
    {
      name: 'an invalid tenant id',
      text: replaceLine(GOOD, '      tenant: shop-a', '      tenant: "shop a"'),
      message: 'config.yaml:15: tenants.keys[0].tenant: must be an id: 1-64 letters, digits or . _ ~ @ + -',
    },
    {
      name: 'a file with no routes',
      text: 'listen: 127.0.0.1:9000\nroutes: []\n',
      message: 'config.yaml:2: routes: must list at least one route: a gateway with no routes serves nothing',
    },
    {
      name: 'a file without routes',
      text: 'listen: 127.0.0.1:9000\n',
      message: 'config.yaml:1: routes: is required',
    },
    {
      name: 'a member TTL under twice the heartbeat',
      text: `${GOOD}resilience:\n  heartbeatMs: 1000\n  memberTtlMs: 1500\n`,
      message: 'config.yaml:24: resilience.memberTtlMs: must be at least twice heartbeatMs (1000)',
    },
    {
      name: 'a rule that takes over 366 days to refill',
      text: replaceLine(GOOD, '    refillPerSecond: 1', '    refillPerSecond: 1e-300'),
      message: 'config.yaml:21: rules[0].refillPerSecond: must be at least 6.325e-8 (capacity / 31622400): an empty bucket must fill within 366 days',
    },
    {
      name: 'broken YAML',
      text: replaceLine(GOOD, '    methods: [POST]', '    methods: [POST'),
      message: 'config.yaml:5: Flow sequence in block collection must be sufficiently indented and end with a ]',
    },
    {
      name: `a bad value that came from \${VAR}, naming the variable (never its value)`,
      text: GOOD,
      env: { SHOP_A_KEY: 'secret-key-a', UPSTREAM_URL: 'orders.internal:8443' },
      message: `config.yaml:9: routes[1].upstream: must be an http(s) URL with no path, e.g. http://127.0.0.1:8090 (its value came from \${UPSTREAM_URL})`,
    },
    {
      name: `a bad number that came from \${VAR:-default}`,
      text: GOOD,
      env: { SHOP_A_KEY: 'secret-key-a', TIMEOUT: '-5' },
      message: `config.yaml:10: routes[1].timeoutMs: must be at least 1 (its value came from \${TIMEOUT})`,
    },
    {
      name: 'a bad override from the environment',
      text: GOOD,
      env: { SHOP_A_KEY: 'secret-key-a', SLUICE_LISTEN: 'nowhere' },
      message: 'SLUICE_LISTEN: listen: must be host:port, e.g. 127.0.0.1:8080',
    },
  ];
  for (const { name, text, message, env } of cases) {
    it(`refuses ${name}, naming the field and its line`, () => {
      const error = errorOf(text, env);
      if (name === 'broken YAML') assert.match(error.message, /^config\.yaml:\d+: /);
      else assert.equal(error.message, message);
    });
  }
});

describe('engine options', () => {
  it('the engine is built from the validated config; the library names its own option on a bad one', () => {
    const config = parseConfig(`${GOOD}store: { deadlineMs: 7 }\ninstances: 3\nresilience: { heartbeatMs: 100, memberTtlMs: 200 }\n`, {
      env: { SHOP_A_KEY: 'secret-key-a' },
    });
    assert.equal(config.resilience.deadlineMs, 7);
    assert.equal(config.resilience.instances, 3);
    assert.equal(config.resilience.memberTtlMs, 200);
    assert.equal(config.resilience.breaker.resetTimeoutMs, 500, 'defaults filled once, with the file');
    assert.throws(
      () => createEngine({ heartbeatMs: 1000, memberTtlMs: 1500 }),
      (error: unknown) => isSluiceError(error) && error.field === 'memberTtlMs',
    );
  });

  it('a Redis target that names no server is an error naming the field, not 127.0.0.1:6379', () => {
    const refused = (redis: object, field: string, message: RegExp) =>
      assert.throws(
        () => createEngine({ redis }),
        (error: unknown) => isSluiceError(error) && error.field === field && message.test(error.message),
      );
    refused({ url: process.env.SLUICE_TEST_UNSET_VARIABLE }, 'redis.url', /is undefined \(an unset environment variable\?\)/);
    refused({ url: '' }, 'redis.url', /is empty/);
    refused({}, 'redis', /needs url, cluster or sentinel/);
    refused({ cluster: [] }, 'redis', /needs url, cluster or sentinel/);
  });

  it('wrapStore, an option CreateEngineOptions declares, wraps the Redis store the engine decides on (it is no resilience option to refuse)', async () => {
    const answer = { allowed: false, remaining: 0, limit: 1, resetAfterMs: 5, retryAfterMs: 5, delayMs: 0, source: 'redis' as const };
    const wrapped: string[] = [];
    const engine = createEngine({
      redis: { url: 'redis://127.0.0.1:9' },
      connectGraceMs: 60_000,
      wrapStore: (store) => {
        wrapped.push(store.kind);
        return new Proxy(store, { get: (target, name) => (name === 'consume' ? async () => answer : Reflect.get(target, name)) });
      },
    });
    try {
      assert.deepEqual(wrapped, ['redis']);
      const rule = { policy: 'token_bucket' as const, capacity: 1, refillPerSecond: 1 };
      assert.deepEqual(await engine.decide({ tag: 'acme', name: 'orders' }, rule, 1), answer);
    } finally {
      await engine.close();
    }
  });
});

describe('sluice check / start with a bad file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [...sluiceCli(), ...args], {
      encoding: 'utf8',
      env: { ...process.env, SHOP_A_KEY: 'secret-key-a', SLUICE_LISTEN: '127.0.0.1:0', ...env },
      timeout: 30_000,
    });

  it('check accepts a good file and refuses a bad one with the line and field', () => {
    const good = join(dir, 'good.yaml');
    writeFileSync(good, GOOD);
    const ok = cli(['check', '--config', good]);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /ok \(2 routes, 1 rules, 1 keys, store memory\)/);

    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, replaceLine(GOOD, 'upstream: http://127.0.0.1:8090', 'upstream: not-a-url'));
    const refused = cli(['check', '--config', bad]);
    assert.equal(refused.status, 2);
    assert.equal(refused.stderr.trim(), `${bad}:6: routes[0].upstream: must be an http(s) URL with no path, e.g. http://127.0.0.1:8090`);
  });

  // check and start run the one validation: the same exit code and the very same line.
  const resilienceCases: [string, string, string][] = [
    [
      'a member TTL under twice the heartbeat',
      'resilience:\n  heartbeatMs: 1000\n  memberTtlMs: 1500\n',
      ':24: resilience.memberTtlMs: must be at least twice heartbeatMs (1000)',
    ],
    ['rebalancing without a region', "resilience:\n  rebalance:\n    peers: { us: { url: 'redis://127.0.0.1:1' } }\n", ':24: resilience.rebalance: needs region'],
    [
      'rebalancing bounds no two regions can meet',
      "region: eu\nresilience:\n  rebalance:\n    minShare: 0.6\n    peers: { us: { url: 'redis://127.0.0.1:1' } }\n",
      ':25: resilience.rebalance.minShare: 2 regions cannot each hold between 0.6 and 0.95 of a limit',
    ],
  ];
  for (const [name, extra, where] of resilienceCases) {
    it(`check and start both refuse ${name}, naming the file, line and real field`, () => {
      const file = join(dir, `${name.replaceAll(' ', '-')}.yaml`);
      writeFileSync(file, `${GOOD}${extra}`);
      const checked = cli(['check', '--config', file]);
      const started = cli(['start', '--config', file]);
      assert.equal(checked.stderr.trim(), `${file}${where}`);
      assert.equal(started.stderr.trim(), checked.stderr.trim());
      assert.deepEqual([checked.status, started.status], [2, 2]);
    });
  }

  const emptyFiles: [string, string][] = [
    ['an empty file', ''],
    ['a comment-only file', '# nothing here yet\n\n  # still nothing\n'],
  ];
  for (const [name, text] of emptyFiles) {
    it(`check and start refuse ${name}, naming the file`, () => {
      const file = join(dir, `${name.replaceAll(' ', '-')}.yaml`);
      writeFileSync(file, text);
      const checked = cli(['check', '--config', file]);
      assert.equal(checked.status, 2, checked.stdout);
      assert.equal(checked.stderr.trim(), `${file}:1: the file is empty (or only comments): a config needs at least one route under routes:`);
      const started = cli(['start', '--config', file]);
      assert.deepEqual([started.status, started.stderr], [2, checked.stderr]);
    });
  }

  it('start exits 2 (a config error) on a data dir another process holds, naming it', async () => {
    const good = join(dir, 'good-locked.yaml');
    writeFileSync(good, GOOD);
    const dataDir = mkdtempSync(join(dir, 'held-'));
    const holder = new EmbeddedRuleStore({ dataDir });
    try {
      const refused = cli(['start', '--config', good], { SLUICE_DATA_DIR: dataDir });
      assert.equal(refused.status, 2, refused.stderr);
      assert.match(refused.stderr, new RegExp(`data dir ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by process ${process.pid}.*\\(ERR_CONFIG_INVALID\\)`));
    } finally {
      await holder.close();
    }
  });

  it('start exits non-zero without serving on a bad file', () => {
    const bad = join(dir, 'bad-start.yaml');
    writeFileSync(bad, replaceLine(GOOD, '    capacity: 2', '    capacity: -1'));
    const refused = cli(['start', '--config', bad]);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /bad-start\.yaml:20: rules\[0\]\.capacity: must be at least 1/);
  });
});
