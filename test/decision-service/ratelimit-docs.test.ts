// docs/decision-service.md names every reference variable `sluice ratelimit`
// knows of: the ones it reads and the ones it logs as unused.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { IGNORED_VARIABLES } from '../../src/decision-service/reference/ignored-variables.js';

const DOCS = readFileSync('docs/decision-service.md', 'utf8');
/** Families the page names with a wildcard. */
const FAMILIES = [/^REDIS_PERSECOND/, /^MEMCACHE_/, /^TRACING_/, /^DOG_STATSD_MOGRIFIER/];

/** Every upper-case variable name read as `env.NAME` or `'NAME'` in src/decision-service/reference/. */
function variablesRead(): string[] {
  const dir = 'src/decision-service/reference';
  const names = new Set<string>();
  for (const file of readdirSync(dir)) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const match of text.matchAll(/(?:env\.|env\[|')([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g)) names.add(match[1]!);
  }
  return [...names].filter((name) => !name.startsWith('SLUICE_'));
}

describe('decision-service.md: every reference variable', () => {
  it('names each variable Sluice reads or logs as unused', () => {
    const known = [...new Set([...Object.keys(IGNORED_VARIABLES), ...variablesRead()])];
    const missing = known.filter((name) => !FAMILIES.some((family) => family.test(name)) && !DOCS.includes(`\`${name}\``));
    assert.deepEqual(missing, []);
    assert.ok(known.length > 80, `found only ${known.length} variables: the scan is broken`);
  });
});
