// docs/explain.md's example is what `sluice explain` prints: the command in
// its first sh block is run, and its output must equal the text block after it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { it } from 'node:test';
import { run } from '../../src/cli/explain-command.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** `sluice explain a 'b c' d` as argv (single quotes group). */
const argvOf = (line: string): string[] => [...line.matchAll(/'([^']*)'|(\S+)/g)].map(([, quoted, bare]) => quoted ?? bare!);

it('docs/explain.md: the example output is what the command prints', async () => {
  const page = readFileSync(join(ROOT, 'docs/explain.md'), 'utf8');
  const found = /```sh\n(sluice explain --config [^\n]+)\n```\n\n```text\n([\s\S]*?)```/.exec(page);
  assert.ok(found, 'the page has the command and its output');
  const [, command, output] = found;
  let printed = '';
  const io = {
    out: (text: string) => {
      printed += text;
    },
    err: (text: string) => assert.fail(text),
    env: {},
  };
  const argv = argvOf(command!).slice(2).map((arg) => (arg.startsWith('examples/') ? join(ROOT, arg) : arg));
  assert.equal(await run(argv, io), 0);
  assert.equal(printed, output);
});
