// docs/configuration-reference.md and docs/environment-variables.md are the
// config schema in prose (scripts/gen-config-docs.ts renders them from each
// option's .meta()): every option has a description and a row, every row is an
// option, the pages are exactly what the script renders, and what the schema
// says a reload applies is what the reload does.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CONFIG_REFERENCE, ENV_REFERENCE, renderConfigReference, renderEnvReference } from '../../scripts/gen-config-docs.js';
import { RESTART_PATHS } from '../../src/admin/config-reload.js';
import { envOverrides } from '../../src/config/env.js';
import { knownVariables } from '../../src/config/env-names.js';
import { configOptions, envOptions } from '../../src/config/options.js';

const configPage = readFileSync(CONFIG_REFERENCE, 'utf8');
const envPage = readFileSync(ENV_REFERENCE, 'utf8');

/** The first cell of each table row, when it is code: an option's path or a variable's name. */
const firstCells = (page: string) => [...page.matchAll(/^\| `([^`]+)` \|/gm)].map(([, name]) => name!);

describe('docs/configuration-reference.md', () => {
  it('is what scripts/gen-config-docs.ts renders from the schema', () => {
    assert.equal(configPage, renderConfigReference(), 'run: node --import tsx scripts/gen-config-docs.ts --write');
  });

  it('gives every option of the schema a description', () => {
    const bare = configOptions().filter((option) => !option.description || option.description.length < 8);
    assert.deepEqual(
      bare.map((option) => option.path),
      [],
      "options with no .meta({ description }) next to their schema",
    );
  });

  it('has one row per option, and no row that is not one', () => {
    const rows = firstCells(configPage);
    const paths = configOptions().map((option) => option.path);
    assert.deepEqual(paths.filter((path) => !rows.includes(path)), [], 'in the schema, no row');
    assert.deepEqual(rows.filter((row) => !paths.includes(row)), [], 'a row, not in the schema');
    assert.equal(new Set(rows).size, rows.length, 'a row twice');
  });

  it('marks restart-only exactly the fields a reload leaves alone (src/admin/config-reload.ts)', () => {
    const restart = configOptions().filter((option) => !option.reload);
    const topmost = restart.filter((option) => !restart.some((other) => other !== option && (option.path.startsWith(`${other.path}.`) || option.path.startsWith(`${other.path}[]`))));
    assert.deepEqual(topmost.map((option) => option.path).sort(), [...RESTART_PATHS].sort());
  });

  it('reads a variable for a list, a number and text as the schema types them', () => {
    const overrides = envOverrides({ SLUICE_REDIS_CLUSTER: 'a:1, b:2', SLUICE_INSTANCES: '3', SLUICE_WORKERS: 'auto', SLUICE_LOG_FORMAT: 'json' });
    assert.deepEqual(
      overrides.map(({ variable, value }) => [variable, value]),
      [
        ['SLUICE_REDIS_CLUSTER', ['a:1', 'b:2']],
        ['SLUICE_WORKERS', 'auto'],
        ['SLUICE_INSTANCES', 3],
        ['SLUICE_LOG_FORMAT', 'json'],
      ],
    );
  });
});

describe('docs/environment-variables.md', () => {
  it('is what scripts/gen-config-docs.ts renders from the schema', () => {
    assert.equal(envPage, renderEnvReference(), 'run: node --import tsx scripts/gen-config-docs.ts --write');
  });

  it('lists every variable Sluice reads, and no other', () => {
    const rows = firstCells(envPage);
    const known = knownVariables();
    assert.deepEqual(known.filter((name) => !rows.includes(name)), [], 'read, not documented');
    assert.deepEqual(rows.filter((name) => !known.includes(name)), [], 'documented, not read');
  });

  it('reads at start the same variables, for the same options, as the pages list (envOptions walks the zod definitions)', () => {
    const documented = configOptions().flatMap((option) => (option.env ? [{ env: option.env, keys: option.keys, envKind: option.envKind }] : []));
    assert.deepEqual(
      envOptions().map(({ env, keys, envKind }) => ({ env, keys, envKind })),
      documented,
    );
  });

  it('names each variable once across the schema', () => {
    const names = configOptions().flatMap((option) => (option.env ? [option.env] : []));
    assert.equal(new Set(names).size, names.length, names.join(', '));
  });
});
