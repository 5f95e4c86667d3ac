// Writes docs/cli.md from the CLI's own command list (src/cli/commands.ts) and
// each command's summary, with the page that covers it:
//   node --import tsx scripts/gen-cli-docs.ts          prints it
//   node --import tsx scripts/gen-cli-docs.ts --write  writes docs/cli.md
// test/docs/cli-reference.test.ts fails when the page and the commands differ.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../src/cli/commands.js';

export const CLI_DOC = fileURLToPath(new URL('../docs/cli.md', import.meta.url));

/** The page and section that explain each command; a command missing here fails the test. */
export const COMMAND_GUIDES: Record<string, string> = {
  start: '[README, quick start](../README.md#quick-start), [operations.md](operations.md#workers)',
  check: '[configuration.md](configuration.md)',
  explain: '[explain.md](explain.md)',
  migrate: '[admin-api.md, CLI](admin-api.md#cli-for-operators)',
  rules: '[admin-api.md, CLI](admin-api.md#cli-for-operators)',
  overrides: '[admin-api.md, overrides](admin-api.md#overrides)',
  plans: '[plans.md](plans.md)',
  lists: '[lists.md, managing them at runtime](lists.md#managing-them-at-runtime)',
  reload: '[operations.md, reload](operations.md#reload-without-downtime)',
  ratelimit: '[decision-service.md](decision-service.md#sluice-ratelimit-the-references-deployment-as-it-is)',
  blocks: '[admin-api.md, penalty blocks](admin-api.md#penalty-blocks)',
  keys: '[admin-api.md, CLI](admin-api.md#cli-for-operators)',
  tokens: '[admin-api.md, tokens and roles](admin-api.md#tokens-and-roles)',
  audit: '[admin-api.md, audit log](admin-api.md#audit-log)',
  usage: '[tenant-usage.md](tenant-usage.md)',
};

export async function renderCliDoc(): Promise<string> {
  const rows = await Promise.all(
    Object.entries(COMMANDS).map(async ([name, load]) => `| \`sluice ${name}\` | ${(await load()).summary.replaceAll('|', '\\|')} | ${COMMAND_GUIDES[name] ?? '—'} |`),
  );
  return `# CLI reference

<!-- Generated from src/cli/commands.ts by scripts/gen-cli-docs.ts: edit a command's summary, then run
     node --import tsx scripts/gen-cli-docs.ts --write -->

\`sluice <command> [options]\`; \`sluice help\` prints the same list. A config
error exits 2 and names the file, line and field; so does an option the
command does not take, or one missing its value (\`Unknown option '--jsn'\`);
a failed admin API call exits 1 (codes: [errors.md](errors.md#cli-only)). The commands that talk to a
running gateway use the admin API at \`SLUICE_ADMIN_URL\` with the token in
\`SLUICE_ADMIN_TOKEN\` ([environment-variables.md](environment-variables.md)).

| command | what it does | guide |
| --- | --- | --- |
${rows.join('\n')}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = await renderCliDoc();
  if (process.argv.includes('--write')) writeFileSync(CLI_DOC, page);
  else process.stdout.write(page);
}
