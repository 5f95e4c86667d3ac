// The CLI's declared-option parser (start, check, explain): a string option
// takes the next argument verbatim, whatever it starts with; a mistake is a
// usage error naming the option, said once, and the command exits 2.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { argsOrReport, parseDeclaredArgs, UsageError } from '../../src/cli/cli-io.js';
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
