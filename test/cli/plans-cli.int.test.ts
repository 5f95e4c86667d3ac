// `sluice plans` against a real admin API: the commands examples/plans.yaml
// lists, run as written, then every command's output, errors and exit codes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CliIo } from '../../src/cli/cli-io.js';
import { run as plans } from '../../src/cli/plans-command.js';
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
  const code = await plans([...argv, '--admin', f.admin.url], io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('sluice plans', () => {
  it("runs examples/plans.yaml's commands as written", async () => {
    const example = readFileSync(join(import.meta.dirname, '../../examples/plans.yaml'), 'utf8');
    const commands = [...example.matchAll(/^#\s+sluice plans (.+)$/gm)].map((m) => m[1]!.trim().split(/\s+/));
    assert.ok(commands.length >= 7, 'the example lists its commands');
    for (const argv of commands) {
      const done = await cli(argv);
      assert.equal(done.code, 0, `sluice plans ${argv.join(' ')}: ${done.err}`);
    }
    const pro = await f.store.plans.get('pro');
    assert.deepEqual(pro?.limits.map((l) => [l.scope, l.target, l.rule.policy]), [['global', '*', 'token_bucket'], ['limit', 'reports-daily', 'fixed_window']]);
    assert.equal((await f.store.plans.getAssignment('tenant', 'shop-a'))?.plan, 'free');
  });

  it('lists, shows with who is on it, sets from JSON, unsets, moves, unassigns and deletes', async () => {
    assert.match((await cli(['list'])).out, /^free\tglobal: \{"policy":"token_bucket","capacity":5,"refillPerSecond":1\}$/m);
    const shown = JSON.parse((await cli(['show', 'free'])).out);
    assert.deepEqual(shown.assignments.map((a: { id: string }) => a.id), ['shop-a']);
    assert.equal((await cli(['set-limit', 'free', '--route', 'orders', '{"policy":"fixed_window","limit":3,"windowMs":1000}'])).code, 0);
    assert.equal((await f.store.plans.get('free'))?.limits.length, 2);
    assert.equal((await cli(['unset-limit', 'free', '--route', 'orders'])).code, 0);
    assert.equal((await cli(['assign', 'pro', '--tenant', 'shop-a'])).out, 'tenant shop-a is on plan pro\n');
    assert.equal((await cli(['unassign', '--tenant', 'shop-a'])).code, 0);
    assert.equal((await cli(['unassign', '--tenant', 'shop-b'])).code, 0);
    assert.equal((await cli(['delete', 'free'])).code, 0);
    assert.equal(await f.store.plans.get('free'), undefined);
    assert.equal(JSON.parse((await cli(['list', '--json'])).out).length, 1);
  });

  it('reports API errors naming the field, and usage errors with code 2', async () => {
    const bad = await cli(['set-limit', 'pro', '--global', '--policy', 'token_bucket', '--capacity', '0', '--refill-per-second', '1']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /400 body\.capacity/);
    const inUse = await cli(['assign', 'pro', '--tenant', 'x']);
    assert.equal(inUse.code, 0);
    assert.match((await cli(['delete', 'pro'])).err, /409 .*\(ERR_PLAN_IN_USE\)/);
    assert.match((await cli(['create', 'pro'])).err, /\(ERR_PLAN_EXISTS\)/);
    assert.match((await cli(['assign', 'nope', '--tenant', 'x'])).err, /404/);
    assert.equal((await cli(['set-limit', 'pro', '--policy', 'gcra'])).code, 2, 'no scope');
    assert.equal((await cli(['set-limit', 'pro', '--global', '--route', 'a', '--policy', 'gcra'])).code, 2, 'two scopes');
    assert.equal((await cli(['assign', 'pro'])).code, 2);
    assert.equal((await cli(['assign', 'pro', '--tenant', 'a', '--key', 'b'])).code, 2);
    assert.equal((await cli(['frobnicate'])).code, 2);
    assert.equal((await cli(['show'])).code, 2);
  });
});
