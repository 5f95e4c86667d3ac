// `sluice lists` against a real admin API on the embedded store: add each kind
// of entry, list them (text and JSON), remove one; a bad CIDR is refused with
// the field named and exit 1; a usage error exits 2; the stored entries are
// what the gateway's rule cache applies.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CliIo } from '../../src/cli/cli-io.js';
import { run as lists } from '../../src/cli/lists-command.js';
import { eventually } from '../helpers/poll.js';
import { type AdminFixture, startAdminFixture, TOKEN } from '../helpers/admin-fixture.js';

let f: AdminFixture;
before(async () => {
  f = await startAdminFixture();
});
after(async () => {
  await f.close();
});

async function cli(argv: string[], env: NodeJS.ProcessEnv = { SLUICE_ADMIN_TOKEN: TOKEN }) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => void out.push(t), err: (t) => void err.push(t), env };
  const code = await lists([...argv, '--admin', f.admin.url], io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('sluice lists', () => {
  it('adds, lists and removes entries; the rule cache applies them', async () => {
    const denied = await cli(['add', 'deny', '--cidr', '203.0.113.0/24', '--note', 'scanner network']);
    assert.equal(denied.code, 0, denied.err);
    const id = /entry (le_\S+) \(cidr 203\.0\.113\.0\/24\)/.exec(denied.out)?.[1];
    assert.ok(id, denied.out);
    const lifted = await cli(['add', 'allow', '--tenant', 'partner', '--routes', 'orders,search', '--limit-id', 'per-ip', '--expires', '2099-01-01T00:00:00Z']);
    assert.equal(lifted.code, 0, lifted.err);
    const bot = await cli(['add', 'deny', '--header', 'User-Agent=BadBot/2.1']);
    assert.equal(bot.code, 0, bot.err);
    assert.match(bot.out, /header user-agent sha256:[A-Za-z0-9_-]{43}/);
    assert.equal(bot.out.includes('BadBot'), false, 'the value is not echoed');

    const listed = await cli(['list']);
    assert.equal(listed.code, 0, listed.err);
    const lines = listed.out.trim().split('\n');
    assert.equal(lines.length, 3);
    assert.equal(lines[0], `${id}\tdeny\tcidr 203.0.113.0/24\tevery route\tscanner network`);
    assert.match(lines[1]!, /\tallow\ttenant partner\troutes orders,search, lifts per-ip, until 2099-01-01T00:00:00\.000Z$/);
    const json = JSON.parse((await cli(['list', '--json'])).out) as { id: string; action: string }[];
    assert.deepEqual(json.map((e) => e.action), ['deny', 'allow', 'deny']);

    await eventually(() => assert.equal(f.cache.lists().check({ route: 'orders', headers: {}, now: Date.now(), ip: () => ({ address: '203.0.113.9', family: 'ipv4' }) }).action, 'deny'), 1000);
    const removed = await cli(['remove', id]);
    assert.deepEqual([removed.code, removed.out], [0, `removed list entry ${id}\n`]);
    await eventually(() => assert.equal(f.cache.lists().check({ route: 'orders', headers: {}, now: Date.now(), ip: () => ({ address: '203.0.113.9', family: 'ipv4' }) }).action, undefined), 1000);
    assert.equal((await cli(['list'])).out.trim().split('\n').length, 2);
  });

  it('a refused entry exits 1 naming the field; a usage error exits 2', async () => {
    const bad = await cli(['add', 'deny', '--cidr', '203.0.113.0/33']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /cidr/);
    assert.match(bad.err, /ERR_LIST_ENTRY_INVALID|must be an IPv4 or IPv6/);
    const gone = await cli(['remove', 'le_nope']);
    assert.equal(gone.code, 1);
    for (const argv of [['add', 'block', '--cidr', '10.0.0.0/8'], ['add', 'deny'], ['add', 'deny', '--cidr', '10.0.0.0/8', '--tenant', 'x'], ['add', 'deny', '--header', 'novalue'], ['remove'], ['frobnicate']]) {
      const done = await cli(argv);
      assert.equal(done.code, 2, `${argv.join(' ')}: ${done.err}`);
      assert.match(done.err, /usage: sluice lists/);
    }
  });
});
