// docs/errors.md is the catalogue (src/core/error-codes.ts) in prose: every code
// in one is in the other, with the same status, and the page is exactly what
// scripts/errors-doc.ts renders (run it with --write after editing the catalogue).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ERRORS_DOC, renderErrorsDoc } from '../../scripts/errors-doc.js';
import { CLI_ERRORS, GATEWAY_ERRORS, SLUICE_ERRORS } from '../../src/core/error-codes.js';

const page = readFileSync(ERRORS_DOC, 'utf8');

/** code → status (or `exit N`) from the page's table rows. */
function documented(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const [, code, status] of page.matchAll(/^\| `([A-Za-z_]+)` \| ([^|]+?) \|/gm)) rows.set(code!, status!);
  return rows;
}

function catalogued(): Map<string, string> {
  return new Map([
    ...Object.entries(GATEWAY_ERRORS).map(([code, e]): [string, string] => [code, String(e.status)]),
    ...Object.entries(SLUICE_ERRORS).map(([code, e]): [string, string] => [code, String(e.status)]),
    ...Object.entries(CLI_ERRORS).map(([code, e]): [string, string] => [code, `exit ${e.exit}`]),
  ]);
}

describe('docs/errors.md', () => {
  it('lists every catalogued code, and no other, with its status', () => {
    const docs = documented();
    const codes = catalogued();
    assert.deepEqual([...codes.keys()].filter((code) => !docs.has(code)), [], 'in the catalogue, missing from docs/errors.md');
    assert.deepEqual([...docs.keys()].filter((code) => !codes.has(code)), [], 'in docs/errors.md, not in the catalogue');
    for (const [code, status] of codes) assert.equal(docs.get(code), status, code);
  });

  it('is what scripts/errors-doc.ts renders from the catalogue', () => {
    assert.equal(page, renderErrorsDoc(), 'run: node --import tsx scripts/errors-doc.ts --write');
  });

  it('gives every code a meaning and a thing to do', () => {
    for (const entry of [...Object.values(GATEWAY_ERRORS), ...Object.values(SLUICE_ERRORS), ...Object.values(CLI_ERRORS)]) {
      assert.ok(entry.meaning.length > 10 && entry.action.length > 10, JSON.stringify(entry));
    }
  });

  it('has no code spelled in both vocabularies', () => {
    const gateway = new Set(Object.keys(GATEWAY_ERRORS));
    assert.ok([...Object.keys(SLUICE_ERRORS), ...Object.keys(CLI_ERRORS)].every((code) => /^ERR_[A-Z_]+$/.test(code) && !gateway.has(code)));
    assert.ok([...gateway].every((name) => /^[a-z_]+$/.test(name)));
  });
});
