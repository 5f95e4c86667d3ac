// How a test starts the sluice CLI in a process of its own: the node arguments before the
// CLI's own. In a run of scripts/run-tests.mjs, TEST_BUILD_DIR names the compiled copy of
// src/ and the CLI starts from it; without it (a file run alone) the sources run through tsx
// from the checkout, the working directory. Loading tsx cost each start more than the CLI's own
// start-up did.
import { join } from 'node:path';

export function sluiceCli(): string[] {
  const build = process.env.TEST_BUILD_DIR;
  return build ? ['--enable-source-maps', join(build, 'src/cli/main.js')] : ['--import', 'tsx', 'src/cli/main.ts'];
}
