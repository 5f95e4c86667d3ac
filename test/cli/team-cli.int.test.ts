// `sluice tokens` and `sluice audit` against a real admin API on the embedded store.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'csv-parse/sync';
import { run as audit } from '../../src/cli/audit-command.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { run as tokens } from '../../src/cli/tokens-command.js';
import { type AdminFixture, startAdminFixture, TOKEN } from '../helpers/admin-fixture.js';

let f: AdminFixture;
before(async () => {
  f = await startAdminFixture();
});
after(async () => {
  await f.close();
});

async function cli(command: typeof tokens, argv: string[], token = TOKEN) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => void out.push(t), err: (t) => void err.push(t), env: { SLUICE_ADMIN_TOKEN: token } };
  const code = await command([...argv, '--admin', f.admin.url], io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('sluice tokens', () => {
  it('creates (printing the token once), lists and revokes', async () => {
    const made = await cli(tokens, ['create', 'ci-bot', 'write', '--json']);
    assert.equal(made.code, 0, made.err);
    const { token } = JSON.parse(made.out);
    assert.equal((await f.call('PUT', '/rules/t/r', { body: { policy: 'gcra', capacity: 1, refillPerSecond: 1 }, token })).status, 200);
    const listed = await cli(tokens, ['list']);
    assert.match(listed.out, /^ci-bot\twrite\tcreated /);
    assert.ok(!listed.out.includes(token));
    assert.equal((await cli(tokens, ['revoke', 'ci-bot'])).code, 0);
    assert.equal((await f.call('GET', '/rules', { token })).status, 401);
  });

  it('says what is wrong: a bad role names the field, a write token may not make tokens', async () => {
    const bad = await cli(tokens, ['create', 'x', 'root']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /body\.role/);
    const writer = JSON.parse((await cli(tokens, ['create', 'writer', 'write', '--json'])).out).token;
    const refused = await cli(tokens, ['create', 'y', 'admin'], writer);
    assert.notEqual(refused.code, 0);
    assert.match(refused.err, /403 .*needs admin/);
  });
});

describe('sluice audit', () => {
  it('exports every page as JSON lines or CSV, filtered', async () => {
    for (let i = 0; i < 3; i++) await f.call('PUT', `/rules/t${i},"q"/r`, { body: { policy: 'gcra', capacity: 1, refillPerSecond: 1 } });
    for (let i = 0; i < 1001; i++) await f.store.team.appendAudit({ actor: 'bulk', address: '127.0.0.1', kind: 'bucket', action: 'DELETE /buckets/{tenant}/{route}', target: `b/${i}`, before: null, after: null, outcome: 'ok' });
    const lines = (await cli(audit, ['--actor', 'bulk'])).out.trim().split('\n').map((line) => JSON.parse(line));
    assert.equal(lines.length, 1001, 'two pages of the API, every entry once');
    assert.equal(new Set(lines.map((e) => e.id)).size, 1001);
    const csv = await cli(audit, ['--kind', 'rule', '--format', 'csv', '--since', '2020-01-01T00:00:00Z']);
    assert.equal(csv.code, 0, csv.err);
    const rows = parse(csv.out, { columns: true }) as Record<string, string>[];
    assert.ok(rows.every((row) => row.kind === 'rule'));
    assert.deepEqual(rows.map((row) => row.actor).sort(), ['bootstrap', 'bootstrap', 'bootstrap', 'ci-bot']);
    assert.ok(rows.some((row) => row.outcome === 'failed' && row.target?.includes('"q"')), 'the invalid tenant is logged as failed, quoted in CSV');
    assert.notEqual((await cli(audit, ['--format', 'xml'])).code, 0);
  });

  it("defuses formula cells in CSV: a read token's refused write cannot plant =HYPERLINK(...)", async () => {
    const reader = JSON.parse((await cli(tokens, ['create', 'csv-reader', 'read', '--json'])).out).token;
    const planted = ['=HYPERLINK("http://attacker.example/","click")', '+1+1', '-2+3', '@SUM(A1)', '\tx', '\rx'];
    for (const tenant of planted) assert.equal((await f.call('PUT', `/rules/${encodeURIComponent(tenant)}/r`, { body: {}, token: reader })).status, 403);
    const csv = await cli(audit, ['--actor', 'csv-reader', '--format', 'csv']);
    assert.equal(csv.code, 0, csv.err);
    const rows = parse(csv.out, { columns: true }) as Record<string, string>[];
    assert.deepEqual(rows.map((row) => row.target).reverse(), planted.map((tenant) => `'${tenant}/r`));
    assert.ok(rows.every((row) => row.outcome === 'failed'));
  });
});
