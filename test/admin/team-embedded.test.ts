// Tokens, roles and the audit log on the embedded store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedRuleStore } from '../../src/rules/embedded-store.js';
import { teamSuite } from './team-suite.js';

teamSuite('embedded store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-team-'));
  const store = new EmbeddedRuleStore({ dataDir: dir });
  return {
    store,
    close: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
