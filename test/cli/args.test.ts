// The CLI's one argument parser (start, check, explain, and the admin
// commands with their positional arguments): a string option
// takes the next argument verbatim, whatever it starts with; a mistake is a
// usage error naming the option, said once, and the command exits 2.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { argsOrReport, parseCommandArgs, parseDeclaredArgs, UsageError } from '../../src/cli/cli-io.js';
import { run as reloadCommand } from '../../src/cli/reload-command.js';
import { run as rulesCommand, ruleFromOptions, ruleOptions } from '../../src/cli/rules-command.js';
import { run as tokensCommand } from '../../src/cli/tokens-command.js';
import { command as check } from '../../src/cli/check.js';

const OPTIONS = { config: { type: 'string', short: 'c' }, token: { type: 'string' }, connect: { type: 'boolean' } } as const;

describe('parseDeclaredArgs', () => {
  it('gives a string option the next argument even when it starts with a dash, long or short', () => {
    assert.deepEqual({ ...parseDeclaredArgs(['--token', '--abc', '-c', '-file.yaml', '--connect'], OPTIONS) }, { token: '--abc', config: '-file.yaml', connect: true });
    assert.deepEqual({ ...parseDeclaredArgs(['--token=-x'], OPTIONS) }, { token: '-x' });
  });

  for (const [argv, message] of [
    [['--tokn', 'x'], /^Unknown option '--tokn'/],
    [['--token'], /argument missing/],
    [['stray'], /^unexpected argument stray$/],
  ] as [string[], RegExp][]) {
    it(`refuses ${argv.join(' ')} with a usage error naming it`, () => {
      assert.throws(() => parseDeclaredArgs(argv, OPTIONS), (error: unknown) => error instanceof UsageError && message.test(error.message));
    });
  }
});

describe('argsOrReport and the commands that use it', () => {
  it('says the mistake once, on stderr, prefixed with the command', () => {
    let said = '';
    assert.equal(argsOrReport(['--conect'], OPTIONS, 'check', { err: (text) => (said += text) }), undefined);
    assert.equal(said, "sluice check: Unknown option '--conect'\n");
  });

  it('sluice check --conect exits 2 before reading any file', async () => {
    const write = process.stderr.write;
    let said = '';
    process.stderr.write = ((text: string) => {
      said += text;
      return true;
    }) as typeof process.stderr.write;
    try {
      assert.equal(await check.run(['--conect']), 2);
    } finally {
      process.stderr.write = write;
    }
    assert.match(said, /^sluice check: Unknown option '--conect'/);
  });
});

describe('parseCommandArgs (the admin commands: the same parser, with positional arguments)', () => {
  it('takes positional arguments, one starting with a dash included, and the options declared', () => {
    const { positional, options } = parseCommandArgs(['set', '-tenant', 'orders', '--capacity', '200', '--shadow'], { capacity: { type: 'string' }, shadow: { type: 'boolean' } });
    assert.deepEqual(positional, ['set', '-tenant', 'orders']);
    assert.deepEqual([...options], [['capacity', '200'], ['shadow', true]]);
  });

  it('refuses an option the command does not declare: a misspelt one never passes unseen', () => {
    assert.throws(
      () => parseCommandArgs(['list', '--tenat', 'acme'], { tenant: { type: 'string' } }),
      (error: unknown) => error instanceof UsageError && /^Unknown option '--tenat'/.test(error.message),
    );
  });

  it('a rule is given by the fields of the rule schema, in kebab case, booleans as flags', () => {
    const fields = ruleOptions();
    for (const name of ['policy', 'capacity', 'refill-per-second', 'limit', 'window-ms', 'window-start', 'offset-ms', 'calendar', 'rate-per-second', 'burst', 'delay', 'on-store-down', 'lease', 'shards', 'region-shares']) {
      assert.deepEqual(fields[name], { type: 'string' }, name);
    }
    assert.deepEqual(fields.shadow, { type: 'boolean' });
    assert.deepEqual(fields.nodelay, { type: 'boolean' });
    const { options } = parseCommandArgs(['--policy', 'leaky_bucket', '--rate-per-second', '2.5', '--burst', '10', '--nodelay', '--lease', '{"batch":5}', '--admin', 'http://x'], { admin: { type: 'string' }, ...fields });
    assert.deepEqual(ruleFromOptions(options), { policy: 'leaky_bucket', ratePerSecond: 2.5, burst: 10, nodelay: true, lease: { batch: 5 } });
  });

  for (const [name, run] of [
    ['rules', rulesCommand],
    ['tokens', tokensCommand],
    ['reload', reloadCommand],
  ] as const) {
    it(`sluice ${name} with a misspelt option exits 2 without calling the admin API`, async () => {
      const said: string[] = [];
      const io = { out: () => {}, err: (text: string) => void said.push(text), env: { SLUICE_ADMIN_URL: 'http://127.0.0.1:9' } };
      assert.equal(await run(name === 'reload' ? ['--admn', 'http://127.0.0.1:9'] : ['list', '--jsn'], io), 2);
      assert.match(said.join(''), /Unknown option '--(jsn|admn)'/);
    });
  }
});
