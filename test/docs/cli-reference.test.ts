// docs/cli.md is the CLI's command list (src/cli/commands.ts) in prose: the
// page is what scripts/gen-cli-docs.ts renders, and every command has a guide.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CLI_DOC, COMMAND_GUIDES, renderCliDoc } from '../../scripts/gen-cli-docs.js';
import { COMMANDS } from '../../src/cli/commands.js';

describe('docs/cli.md', () => {
  it('is what scripts/gen-cli-docs.ts renders from the commands', async () => {
    assert.equal(readFileSync(CLI_DOC, 'utf8'), await renderCliDoc(), 'run: node --import tsx scripts/gen-cli-docs.ts --write');
  });

  it('names a guide for every command, and no command that does not exist', () => {
    assert.deepEqual(Object.keys(COMMANDS).filter((name) => !COMMAND_GUIDES[name]), [], 'add the command to COMMAND_GUIDES');
    assert.deepEqual(Object.keys(COMMAND_GUIDES).filter((name) => !(name in COMMANDS)), []);
  });
});
