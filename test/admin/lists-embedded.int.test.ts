// Stored allow and deny lists on the embedded store (the shared checks of lists-suite.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { listsSuite } from './lists-suite.js';

listsSuite('embedded store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-lists-'));
  const store = new EmbeddedRuleStore({ dataDir: dir });
  return {
    store,
    peer: store,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
