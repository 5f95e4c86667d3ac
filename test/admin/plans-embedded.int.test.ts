// Plans on the embedded store (the shared checks of plans-suite.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { plansSuite } from './plans-suite.js';

plansSuite('embedded store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-plans-'));
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
