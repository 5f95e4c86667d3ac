// Writes the configuration and environment-variable reference pages from the
// schema (src/config/options.ts reads each option's type, default, range,
// variable and reload flag from zod's JSON Schema of the config file):
//   node --import tsx scripts/gen-config-docs.ts          prints both
//   node --import tsx scripts/gen-config-docs.ts --write  writes docs/configuration-reference.md and docs/environment-variables.md
// test/docs/config-reference.test.ts fails when the pages and the schema differ.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { OTHER_VARIABLES } from '../src/config/env-names.js';
import { type ConfigOption, configOptions } from '../src/config/options.js';

export const CONFIG_REFERENCE = fileURLToPath(new URL('../docs/configuration-reference.md', import.meta.url));
export const ENV_REFERENCE = fileURLToPath(new URL('../docs/environment-variables.md', import.meta.url));

const GENERATED = (page: string) => `<!-- Generated from the config schema by scripts/gen-config-docs.ts: edit the option's
     .meta() next to its schema (src/config/schema.ts and the *-schema.ts files), then run
     node --import tsx scripts/gen-config-docs.ts --write -->
<!-- ${page} -->`;

/** A table cell: one line, `|` escaped. */
const cell = (text: string | undefined) => (text ?? '—').replaceAll('\n', ' ').replaceAll('|', '\\|');

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const code = (text: string | undefined) => (text === undefined ? undefined : `\`${text}\``);
const reloadCell = (option: ConfigOption) => (option.reload ? 'yes' : 'restart');
const defaultCell = (option: ConfigOption) => {
  if (option.default !== undefined) return option.default.startsWith('"') || /^[-\d[{tf]/.test(option.default) ? code(option.default.replace(/^"(.*)"$/, '$1')) : option.default;
  return option.required ? '*required*' : undefined;
};

function optionRow(option: ConfigOption): string[] {
  const meaning = option.section ? `${option.description} (a section)` : option.description;
  return [code(option.path)!, option.type, defaultCell(option) ?? '—', option.range ?? '—', code(option.env) ?? '—', reloadCell(option), meaning ?? '—'];
}

/** The options grouped by their top-level field; one-option fields together under "Top level". */
function groups(): [title: string, options: ConfigOption[]][] {
  const byTop = new Map<string, ConfigOption[]>();
  for (const option of configOptions()) {
    const top = option.keys[0]!;
    byTop.set(top, [...(byTop.get(top) ?? []), option]);
  }
  const single: ConfigOption[] = [];
  const out: [string, ConfigOption[]][] = [];
  for (const [top, options] of byTop) {
    if (options.length === 1 && options[0]!.path === top) single.push(options[0]!);
    else out.push([top, options]);
  }
  return [['Top level', single], ...out];
}

export function renderConfigReference(): string {
  const sections = groups().map(([title, options]) => {
    const heading = title === 'Top level' ? '## Top level' : `## ${title}`;
    return `${heading}\n\n${table(['option', 'type', 'default', 'range', 'variable', 'reload', 'meaning'], options.map(optionRow))}`;
  });
  return `# Configuration reference

${GENERATED('docs/configuration-reference.md')}

Every option of the config file, read from the schema that validates it. How
the file is read, and guides to each section, are in
[configuration.md](configuration.md); the variables that override options are
in [environment-variables.md](environment-variables.md).

Columns: **default** is what an absent option means (*required*: the file must
give it, when its section is present); **range** is what the schema accepts;
**variable** is the \`SLUICE_*\` variable that overrides it; **reload** says
whether a reload (\`SIGHUP\`, \`sluice reload\`, \`POST /reload\`) applies a change
(\`yes\`) or the running value stays until a restart (\`restart\`, and the reload
names the field; [operations.md](operations.md#reload-without-downtime)). A
\`[]\` in a path stands for every entry of a list. Durations are in
milliseconds (\`…Ms\`), sizes in bytes (\`…Bytes\`). An unknown field is an error.

${sections.join('\n\n')}
`;
}

export function renderEnvReference(): string {
  const rows = configOptions()
    .filter((option) => option.env !== undefined)
    .map((option) => [
      code(option.env)!,
      code(option.path)!,
      defaultCell(option) ?? '—',
      reloadCell(option),
      [option.description, option.envNote].filter(Boolean).join('; '),
    ]);
  const others = OTHER_VARIABLES.map((variable) => [code(variable.name)!, variable.default ?? '—', variable.description]);
  return `# Environment variables

${GENERATED('docs/environment-variables.md')}

The \`SLUICE_*\` variables override the config file's options, for
deployments; each is read where the schema declares it
([configuration-reference.md](configuration-reference.md)). A list is
comma-separated; a number is taken as one when it is all digits. Without a
Redis setting (file or environment) the memory store is used: one instance only.

${table(['variable', 'sets', 'default', 'reload', 'meaning'], rows)}

## Read outside the config file

${table(['variable', 'default', 'meaning'], others)}

\`UPSTREAM_URL\` is the quick start's: \`examples/quickstart.yaml\` uses it for its
upstream, and when it is set \`npm start\` does not start the demo upstream.

## Unknown variables

A \`SLUICE_*\` variable Sluice does not read (a typo such as
\`SLUICE_REDIS_SENTINAL\`) is warned of when \`sluice start\` or \`sluice check\`
begins, naming the nearest known one: \`sluice: warning: SLUICE_REDIS_SENTINAL
is not a Sluice variable and is ignored; did you mean SLUICE_REDIS_SENTINELS?\`
A \`SLUICE_*\` variable the config file itself references as \`\${VAR}\` (as the
nginx recipe's \`\${SLUICE_REFUSED_STATUS:-429}\`) is not warned of.
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) {
    writeFileSync(CONFIG_REFERENCE, renderConfigReference());
    writeFileSync(ENV_REFERENCE, renderEnvReference());
  } else process.stdout.write(`${renderConfigReference()}\n${renderEnvReference()}`);
}
