// `sluice blocks` against a real admin API, with a real block made through the
// gateway (a limit's penalty box, over real HTTP): list shows the key hashed
// with its tenant, limit and time left (text and JSON); lift lifts it, audited,
// and the key is admitted again; a second lift is a 404 and a bad id or count a
// 400 naming the field (exit 1); a usage error exits 2.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { run as blocks } from '../../src/cli/blocks-command.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const TOKEN = 'blocks-cli-admin-token-0123456789';
const ACME = { 'x-api-key': 'key-acme-blocks-cli-01' };

// One request an hour; the first refusal blocks the key for an hour.
const YAML = `
routes:
  - id: login
    path: /login
    upstream: \${UP}
    limits:
      - id: login
        key: tenant
        rule: { policy: token_bucket, capacity: 1, refillPerSecond: 0.001 }
        penalty: { after: 1, withinMs: 600000, blockMs: 3600000 }
tenants:
  keys:
    - { key: key-acme-blocks-cli-01, tenant: acme }
`;

describe('sluice blocks', () => {
  let upstream: TestUpstream;
  let app: RunningSluice;
  let dir: string;

  const cli = async (argv: string[], env: NodeJS.ProcessEnv = { SLUICE_ADMIN_TOKEN: TOKEN }) => {
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = { out: (t) => void out.push(t), err: (t) => void err.push(t), env };
    const code = await blocks([...argv, '--admin', app.adminUrl!], io);
    return { code, out: out.join(''), err: err.join('') };
  };
  const login = async () => (await call(`${app.url}/login`, { headers: ACME })).status;

  before(async () => {
    upstream = await startUpstream();
    dir = mkdtempSync(join(tmpdir(), 'sluice-blocks-cli-'));
    app = await startGateway(YAML, { UP: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir }, { ruleStore: true, admin: true });
  });
  after(async () => {
    await app?.close();
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with no block: says so', async () => {
    assert.deepEqual(await cli(['list']), { code: 0, out: 'no key is blocked\n', err: '' });
  });

  it('lists a block made through the gateway, lifts it (audited), and the key is admitted again', async () => {
    assert.deepEqual([await login(), await login(), await login()], [200, 429, 429], 'the first refusal blocks');

    const listed = await cli(['list']);
    assert.equal(listed.code, 0, listed.err);
    const lines = listed.out.trim().split('\n');
    assert.equal(lines.length, 1);
    const [id, tenant, limit, left, until] = lines[0]!.split('\t');
    assert.match(id!, /^~h\.[0-9a-f]{32}$/, 'the key hashed');
    assert.deepEqual([tenant, limit], ['acme', 'login']);
    assert.match(left!, /^(1h 00m 00s|[0-5]?\dm [0-5]\ds) left$/);
    assert.match(until!, /^until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(listed.out.includes('key-acme'), false, 'no API key shown');

    const json = JSON.parse((await cli(['list', '--json', '--limit', '10'])).out) as { id: string; tenant: string; limit: string; remainingMs: number; blockedUntilMs: number }[];
    assert.equal(json.length, 1);
    assert.equal(json[0]!.id, id);
    assert.ok(json[0]!.remainingMs > 3_000_000 && json[0]!.remainingMs <= 3_600_000);
    assert.equal(new Date(json[0]!.blockedUntilMs).toISOString(), until!.slice('until '.length));

    const lifted = await cli(['lift', id!]);
    assert.equal(lifted.code, 0, lifted.err);
    assert.match(lifted.out, new RegExp(`^lifted ${id!.replace('.', '\\.')} \\(limit login\\): (1h 00m 00s|[0-5]?\\dm [0-5]\\ds) were left\\n$`));
    assert.deepEqual(await cli(['list']), { code: 0, out: 'no key is blocked\n', err: '' });

    const audit = await fetch(`${app.adminUrl}/audit?kind=bucket`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const entry = ((await audit.json()) as { entries: { action: string; target: string }[] }).entries.find((e) => e.action === 'DELETE /blocks/{id}');
    assert.equal(entry?.target, id, 'the lift is in the audit log');

    const again = await cli(['lift', id!]);
    assert.equal(again.code, 1);
    assert.match(again.err, /^error: 404 no running block with id ~h\.[0-9a-f]{32} \(ERR_NOT_FOUND\)\n$/);

    // Lifted, and its bucket refilled by an operator: the key is admitted again.
    assert.equal((await fetch(`${app.adminUrl}/buckets/acme/login`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } })).status, 204);
    assert.equal(await login(), 200);
  });

  it('a bad id or count is a 400 naming the field (exit 1); a usage error exits 2', async () => {
    const badId = await cli(['lift', 'acme']);
    assert.equal(badId.code, 1);
    assert.match(badId.err, /400 id: must be a block id/);
    const badCount = await cli(['list', '--limit', '0']);
    assert.equal(badCount.code, 1);
    assert.match(badCount.err, /400 limit: must be an integer from 1 to/);
    const noToken = await cli(['list'], {});
    assert.equal(noToken.code, 1);
    assert.match(noToken.err, /SLUICE_ADMIN_TOKEN is not set/);
    for (const argv of [['lift'], ['frobnicate'], []]) {
      const done = await cli(argv);
      assert.equal(done.code, 2, `${argv.join(' ')}: ${done.err}`);
      assert.match(done.err, /usage: sluice blocks/);
    }
  });
});
