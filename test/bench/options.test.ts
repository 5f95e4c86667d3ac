// Where a bench run writes its report: a quick (smoke) run never over the
// committed bench/results, a full run there by default, --out wherever it says.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, it } from 'node:test';
import { DEFAULT_OUT, parseOptions, reportDir } from '../../bench/lib/options.js';

describe('bench report folder', () => {
  it('a quick run without --out writes to a fresh temporary folder', () => {
    const first = reportDir(parseOptions(['--quick']));
    const second = reportDir(parseOptions(['--quick']));
    try {
      assert.ok(first.startsWith(tmpdir()), first);
      assert.notEqual(first, DEFAULT_OUT);
      assert.notEqual(first, second);
    } finally {
      rmSync(first, { recursive: true, force: true });
      rmSync(second, { recursive: true, force: true });
    }
  });

  it('a full run writes to bench/results, and --out wins over both', () => {
    assert.equal(reportDir(parseOptions([])), DEFAULT_OUT);
    assert.equal(reportDir(parseOptions(['--quick', '--out', '/tmp/x'])), '/tmp/x');
    assert.equal(reportDir(parseOptions(['--out=/tmp/y'])), '/tmp/y');
  });
});
